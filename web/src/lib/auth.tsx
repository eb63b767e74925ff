// The signed-in user: session from supabase-js (which refreshes it), and who
// the platform says the user is (role and company from the membership).
import type { Session } from "@supabase/supabase-js";
import { useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useEffect, useState } from "react";
import { api, call } from "../api/client.ts";
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

interface AuthState {
  loading: boolean;
  session: Session | null;
  identity: Identity | null;
  /** Why the identity could not be found (a user with no membership). */
  problem: string | null;
}

const AuthContext = createContext<AuthState>({ loading: true, session: null, identity: null, problem: null });

function claims(token: string): Record<string, unknown> {
  try {
    const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload));
  } catch {
    return {};
  }
}

async function resolveIdentity(session: Session): Promise<Identity | null> {
  const { data, error } = await supabase.functions.invoke<{ role: string | null; company_id: string | null }>(
    "whoami",
    {
      method: "GET",
    },
  );
  if (error || !data?.role || !data.company_id) return null;
  const role = data.role as Role;
  let driverId: string | null = null;
  if (role === "driver") {
    // A driver_id claim, when the token carries one, saves a request.
    const claim = claims(session.access_token).driver_id;
    driverId = typeof claim === "string" ? claim : (await call(api.GET("/api/v1/wallets/me"))).driver_id;
  }
  return { userId: session.user.id, email: session.user.email ?? "", role, companyId: data.company_id, driverId };
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<AuthState>({ loading: true, session: null, identity: null, problem: null });
  const queryClient = useQueryClient();
  useEffect(() => {
    let current: string | null = null;
    const apply = async (session: Session | null) => {
      // Realtime authorizes private channels with the user's token.
      await supabase.realtime.setAuth(session?.access_token ?? null);
      const user = session?.user.id ?? null;
      if (user === current && session) {
        setState((s) => ({ ...s, session }));
        return;
      }
      current = user;
      // Nothing one user saw may show for the next one in this tab.
      queryClient.clear();
      if (!session) {
        setState({ loading: false, session: null, identity: null, problem: null });
        return;
      }
      setState((s) => ({ ...s, loading: true }));
      const identity = await resolveIdentity(session).catch(() => null);
      setState({ loading: false, session, identity, problem: identity ? null : "noRole" });
    };
    const { data } = supabase.auth.onAuthStateChange((_event, session) => {
      // Not inside the callback: supabase-js holds a lock while it runs.
      setTimeout(() => void apply(session), 0);
    });
    return () => data.subscription.unsubscribe();
  }, [queryClient]);
  return <AuthContext.Provider value={state}>{children}</AuthContext.Provider>;
}

export const useAuth = () => useContext(AuthContext);
export const can = (identity: Identity | null, roles: Role[]) => !!identity && roles.includes(identity.role);
