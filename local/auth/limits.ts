// GoTrue's rate limits (internal/api/apilimiter, internal/ratelimit), from
// supabase/config.toml's [auth.rate_limit]:
// - per client address, a token bucket per endpoint group (tollbooth's): 30
//   requests at once, refilled at the configured number per 5 minutes
//   (`token_refresh` for /token, `token_verifications` for /verify,
//   `sign_in_sign_ups` for sign-up, OTP and magic link, recovery, resend and
//   PUT /user, each group a bucket of its own), answered 429
//   `over_request_rate_limit`;
// - for the whole project, `email_sent` mails per hour (an interval counter),
//   answered 429 `over_email_send_rate_limit`.
// Like GoTrue's, the counters live in the memory of the one process that
// serves Auth: GoTrue keeps them per instance too, and a project runs one
// Auth server. Nothing else in the stack shares them.
import type { RateLimits } from "./project.ts";

/** tollbooth's limiter: `burst` requests at once per key, refilled at `perSecond`; idle keys are forgotten. */
export class KeyedBucket {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  #takes = 0;

  constructor(readonly perSecond: number, readonly burst: number, readonly idleMs = 3_600_000) {}

  /** Takes one request's token for `key`; false when the bucket is empty. */
  take(key: string, now = Date.now()): boolean {
    if (++this.#takes % 1_000 === 0) this.#forgetIdle(now);
    const bucket = this.#buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  #forgetIdle(now: number): void {
    for (const [key, bucket] of this.#buckets) if (now - bucket.at > this.idleMs) this.#buckets.delete(key);
  }
}

/** GoTrue's IntervalLimiter: `events` per `intervalMs`, the count reset at each interval's start. */
export class IntervalLimiter {
  #start = Date.now();
  #count = 0;

  constructor(readonly events: number, readonly intervalMs: number) {}

  allow(now = Date.now()): boolean {
    const elapsed = Math.floor((now - this.#start) / this.intervalMs);
    if (elapsed > 0) {
      this.#start += elapsed * this.intervalMs;
      this.#count = 0;
    }
    if (this.#count >= this.events) return false;
    this.#count++;
    return true;
  }
}

/** The endpoint groups, each with a bucket of its own as in GoTrue. */
export type LimitedGroup = "token" | "verify" | "signup" | "otp" | "recover" | "resend" | "user" | "anonymous";

export interface Limiters {
  /** Takes a request of `group` from `client`; false when over the limit. */
  take(group: LimitedGroup, client: string): boolean;
  /** The project-wide e-mail limit. */
  email: IntervalLimiter;
}

const FIVE_MINUTES_S = 300;

export function createLimiters(limits: RateLimits): Limiters {
  const per5Minutes = (events: number) => new KeyedBucket(events / FIVE_MINUTES_S, 30);
  const buckets: Record<LimitedGroup, KeyedBucket> = {
    token: per5Minutes(limits.tokenRefresh),
    verify: per5Minutes(limits.tokenVerifications),
    signup: per5Minutes(limits.signInSignUps),
    otp: per5Minutes(limits.signInSignUps),
    recover: per5Minutes(limits.signInSignUps),
    resend: per5Minutes(limits.signInSignUps),
    user: per5Minutes(limits.signInSignUps),
    anonymous: new KeyedBucket(limits.anonymousUsers / 3600, limits.anonymousUsers),
  };
  return {
    take: (group, client) => buckets[group].take(client),
    email: new IntervalLimiter(limits.emailSent, 3_600_000),
  };
}
