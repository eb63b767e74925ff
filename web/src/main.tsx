import { MutationCache, onlineManager, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ApiError } from "./api/client.ts";
import { App } from "./App.tsx";
// The language first: everything below speaks it.
import "./i18n/index.ts";
import { AuthProvider, reportApiError } from "./lib/auth.tsx";
import { isOnline, subscribeOnline } from "./lib/online.ts";
import { RealtimeProvider } from "./lib/realtime.tsx";
import { RouterProvider } from "./lib/router.tsx";
import "./styles.css";

// Queries wait while the app cannot reach the platform, and fetch again when it can (lib/online.ts).
onlineManager.setEventListener((setOnline) => subscribeOnline(() => setOnline(isOnline())));

const queryClient = new QueryClient({
  // A refused token or a deactivated driver, wherever it shows, ends the session with a sentence (lib/auth.tsx).
  queryCache: new QueryCache({ onError: reportApiError }),
  mutationCache: new MutationCache({ onError: reportApiError }),
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      // A refusal will not change on retry; a lost connection may.
      retry: (count, error) => count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 502),
    },
    mutations: {
      // As docs/spec.md §7 advises: no answer, or the gateway or the database failing, is tried again after 1, 2 and
      // 4 s. Harmless for a POST: every try carries the same Idempotency-Key (api/client.ts), so nothing happens
      // twice; a kept answer (Idempotent-Replayed) would only be answered again, so it is not retried.
      retry: (count, error) =>
        count < 3 && error instanceof ApiError && !error.replayed && (error.status === 0 || error.status >= 502),
      retryDelay: (attempt) => 1_000 * 2 ** attempt,
    },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider>
        <AuthProvider>
          <RealtimeProvider>
            <App />
          </RealtimeProvider>
        </AuthProvider>
      </RouterProvider>
    </QueryClientProvider>
  </StrictMode>,
);

// Built apps open with no connection (src/pwa/service-worker.js); the dev server serves the sources as they change.
if (import.meta.env.PROD && "serviceWorker" in navigator) {
  window.addEventListener("load", () => void navigator.serviceWorker.register("/sw.js").catch(() => {}));
}
