// The signed-in user: session from supabase-js (which refreshes it), and who the platform says the user is (role
// and company from the membership; a driver's id and whether it is active). Each way this can fail is told apart
// (lib/auth's `AuthProblem`), so the screen says what happened and offers the way out that fits. A driver who
// opens the app with no connection gets the identity and data kept from last time (lib/persist.ts).
import {
  FunctionsFetchError,
  FunctionsHttpError,
  isAuthRetryableFetchError,
  type Session,
} from "@supabase/supabase-js";
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import { api, ApiError, call } from "../api/client.ts";
import { isOnline, reportAnswer, subscribeOnline } from "./online.ts";
import { forget, keepSaving, loadSaved, restoreCache } from "./persist.ts";
import { supabase } from "./supabase.ts";

export type Role = "company_owner" | "company_admin" | "admin" | "driver";
export const DELIVERY_MANAGERS: Role[] = ["company_owner", "company_admin", "admin"];
export const COMPANY_MANAGERS: Role[] = ["company_owner", "company_admin"];
export const OWNER: Role[] = ["company_owner"];

export interface Identity {
  userId: string;
  email: string;
  role: Role;
  companyId: string;
  /** Drivers only. */
  driverId: string | null;
}

/**
 * Why there is no identity to work with: the server refused the token (`rejected`), the account belongs to no
 * company (`noCompany`), the driver was deactivated (`deactivated`), or the lookup itself failed: no connection
 * (`offline`, and nothing kept from last time) or the server failing (`unavailable`).
 */
export type AuthProblem = "rejected" | "noCompany" | "deactivated" | "offline" | "unavailable";

interface AuthState {
  loading: boolean;
  session: Session | null;
  identity: Identity | null;
  problem: AuthProblem | null;
  /** The identity is the one kept from last time: the server has not confirmed it yet (no connection). */
  unconfirmed: boolean;
}

interface AuthContextValue extends AuthState {
  /** Looks the identity up again (after a failure). */
  retry(): void;
  /** Signs out on this device (and on the server when it answers). */
  signOut(): Promise<void>;
}

const SIGNED_OUT: AuthState = { loading: false, session: null, identity: null, problem: null, unconfirmed: false };
const AuthContext = createContext<AuthContextValue>({
  ...SIGNED_OUT,
  loading: true,
  retry: () => {},
  signOut: async () => {},
});

function claims(token: string): Record<string, unknown> {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload));
  } catch {
    return {};
  }
}

const DEACTIVATED = /^(this )?driver is deactivated$/;

/** The problem an API answer means for the session as a whole, if any. */
export function sessionProblem(error: unknown): AuthProblem | null {
  if (!(error instanceof ApiError)) return null;
  const detail = (error.body as { detail?: unknown } | null)?.detail;
  if (error.status === 403 && typeof detail === "string" && DEACTIVATED.test(detail)) return "deactivated";
  if (error.status === 401) return "rejected";
  return null;
}

type Lookup = { identity: Identity } | { problem: AuthProblem };

async function lookUp(session: Session): Promise<Lookup> {
  const { data, error } = await supabase.functions.invoke<{ role: string | null; company_id: string | null }>(
    "whoami",
    { method: "GET" },
  );
  reportAnswer(!(error instanceof FunctionsFetchError));
  if (error) {
    if (error instanceof FunctionsFetchError) return { problem: "offline" };
    if (error instanceof FunctionsHttpError && (error.context as Response | undefined)?.status === 401) {
      return { problem: "rejected" };
    }
    return { problem: "unavailable" };
  }
  if (!data?.role || !data.company_id) return { problem: "noCompany" };
  const role = data.role as Role;
  let driverId: string | null = null;
  if (role === "driver") {
    // The wallet names the driver and answers 403 for a deactivated one: a driver learns it before anything else.
    try {
      driverId = (await call(api.GET("/api/v1/wallets/me"))).driver_id;
    } catch (error) {
      const problem = sessionProblem(error);
      if (problem) return { problem };
      if (error instanceof ApiError && error.status === 0) return { problem: "offline" };
      const claim = claims(session.access_token).driver_id;
      if (typeof claim !== "string") return { problem: "unavailable" };
      driverId = claim;
    }
  }
  return {
    identity: { userId: session.user.id, email: session.user.email ?? "", role, companyId: data.company_id, driverId },
  };
}

/** Errors of API calls anywhere in the app, reported here: a refused token or a deactivated driver ends the session. */
const reported = new Set<(error: unknown) => void>();
export function reportApiError(error: unknown) {
  for (const listener of reported) listener(error);
}

async function resolve(client: QueryClient, session: Session): Promise<AuthState> {
  const found = await lookUp(session).catch((): Lookup => ({ problem: "unavailable" }));
  const saved = await loadSaved(session.user.id);
  if ("identity" in found) {
    if (found.identity.role === "driver") restoreCache(client, saved);
    return { loading: false, session, identity: found.identity, problem: null, unconfirmed: false };
  }
  // No connection: a driver works on with what was kept from last time.
  const kept = saved?.identity as Identity | undefined;
  if (found.problem === "offline" && kept?.userId === session.user.id) {
    restoreCache(client, saved);
    return { loading: false, session, identity: kept, problem: null, unconfirmed: true };
  }
  return { loading: false, session, identity: null, problem: found.problem, unconfirmed: false };
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<AuthState>({ ...SIGNED_OUT, loading: true });
  const queryClient = useQueryClient();
  const session = useRef<Session | null>(null);
  const run = useRef(0);

  const lookUpAgain = useCallback(async (quiet: boolean) => {
    const current = session.current;
    if (!current) return;
    const mine = ++run.current;
    if (!quiet) setState((s) => ({ ...s, loading: true }));
    const next = await resolve(queryClient, current);
    if (mine !== run.current) return;
    // Looked up quietly (the connection came back): a failure changes nothing on screen.
    if (quiet && !next.identity && next.problem !== "rejected" && next.problem !== "deactivated") return;
    setState(next);
  }, [queryClient]);

  useEffect(() => {
    let user: string | null = null;
    const apply = async (next: Session | null) => {
      // Realtime authorizes private channels with the user's token.
      await supabase.realtime.setAuth(next?.access_token ?? null);
      session.current = next;
      const id = next?.user.id ?? null;
      if (id === user && next) {
        setState((s) => ({ ...s, session: next }));
        return;
      }
      user = id;
      // Nothing one user saw may show for the next one in this tab.
      queryClient.clear();
      if (!next) {
        run.current++;
        setState(SIGNED_OUT);
        return;
      }
      await lookUpAgain(false);
    };
    const { data } = supabase.auth.onAuthStateChange((_event, next) => {
      // Not inside the callback: supabase-js holds a lock while it runs.
      setTimeout(() => void apply(next), 0);
    });
    return () => data.subscription.unsubscribe();
  }, [queryClient, lookUpAgain]);

  // An identity taken from the device is confirmed with the server once the connection is back.
  useEffect(() => {
    if (!state.unconfirmed && state.problem !== "offline") return;
    return subscribeOnline(() => {
      if (isOnline()) void lookUpAgain(state.problem !== "offline");
    });
  }, [state.unconfirmed, state.problem, lookUpAgain]);

  // What the API says about the session while the app is in use.
  useEffect(() => {
    let refreshing = false;
    let refreshedAt = 0;
    const listener = async (error: unknown) => {
      const problem = sessionProblem(error);
      if (problem === "deactivated") setState((s) => (s.identity ? { ...s, identity: null, problem } : s));
      if (problem !== "rejected" || refreshing) return;
      const end = () => setState((s) => (s.identity ? { ...s, identity: null, problem: "rejected" } : s));
      // Refused again with a token just renewed: the API will not take this session.
      if (Date.now() - refreshedAt < 30_000) return end();
      // A token the API refuses: a new one may be accepted. When Auth refuses to give one, supabase-js signs out
      // (back to the sign-in page); when Auth cannot be reached, nothing is decided yet.
      refreshing = true;
      const { error: refused } = await supabase.auth.refreshSession();
      refreshing = false;
      if (!refused) refreshedAt = Date.now();
      else if (!isAuthRetryableFetchError(refused)) end();
    };
    reported.add(listener);
    return () => void reported.delete(listener);
  }, []);

  // A driver's data is kept on the device while signed in.
  useEffect(() => {
    const identity = state.identity;
    if (!identity || identity.role !== "driver") return;
    return keepSaving(queryClient, identity.userId, identity);
  }, [state.identity, queryClient]);

  const signOut = useCallback(async () => {
    const user = session.current?.user.id;
    if (user) await forget(user);
    const { error } = await supabase.auth.signOut();
    // The server unreachable or refusing the token: signed out on this device all the same.
    if (error) await supabase.auth.signOut({ scope: "local" });
  }, []);
  const value = useMemo<AuthContextValue>(
    () => ({ ...state, retry: () => void lookUpAgain(false), signOut }),
    [state, lookUpAgain, signOut],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export const useAuth = () => useContext(AuthContext);
export const can = (identity: Identity | null, roles: Role[]) => !!identity && roles.includes(identity.role);
