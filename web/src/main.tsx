import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { ApiError } from "./api/client.ts";
import { App } from "./App.tsx";
// The language first: everything below speaks it.
import "./i18n/index.ts";
import { AuthProvider } from "./lib/auth.tsx";
import { RealtimeProvider } from "./lib/realtime.tsx";
import { RouterProvider } from "./lib/router.tsx";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      // A refusal will not change on retry; a lost connection may.
      retry: (count, error) => count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 502),
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
