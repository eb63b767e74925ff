// A small path router on the History API: the app has a dozen pages, not worth a dependency.
import { type AnchorHTMLAttributes, createContext, type ReactNode, useContext, useEffect, useState } from "react";

const PathContext = createContext<string>("/");

export function navigate(to: string, replace = false) {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [path, setPath] = useState(window.location.pathname + window.location.search);
  useEffect(() => {
    const update = () => setPath(window.location.pathname + window.location.search);
    window.addEventListener("popstate", update);
    return () => window.removeEventListener("popstate", update);
  }, []);
  return <PathContext.Provider value={path}>{children}</PathContext.Provider>;
}

export const usePath = () => useContext(PathContext).split("?")[0];

/** The query string of the current address, and a way to replace it (kept in history, so a filtered list can be shared). */
export function useSearchParams(): [URLSearchParams, (next: URLSearchParams) => void] {
  const full = useContext(PathContext);
  const at = full.indexOf("?");
  const params = new URLSearchParams(at >= 0 ? full.slice(at + 1) : "");
  const set = (next: URLSearchParams) => {
    const query = next.toString();
    navigate(`${window.location.pathname}${query ? `?${query}` : ""}`, true);
  };
  return [params, set];
}

/** `/deliveries/:id` against the current path: the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split("/");
  const b = path.replace(/\/+$/, "").split("/");
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i].startsWith(":")) params[a[i].slice(1)] = decodeURIComponent(b[i]);
    else if (a[i] !== b[i]) return null;
  }
  return params;
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const path = usePath();
  return (
    <a
      href={to}
      aria-current={path === to ? "page" : undefined}
      {...rest}
      onClick={(event) => {
        rest.onClick?.(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        navigate(to);
      }}
    />
  );
}
