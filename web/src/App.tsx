// Layout and pages by role: the company panel for owners and admins, the
// phone-sized driver app for drivers. A page a role may not open says so.
import { lazy, type ReactNode, Suspense, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { config } from "./config.ts";
import type { ptBR } from "./i18n/pt-BR.ts";
import { type AuthProblem, can, COMPANY_MANAGERS, DELIVERY_MANAGERS, type Role, useAuth } from "./lib/auth.tsx";
import { useOnline } from "./lib/online.ts";
import { outbox, useDriverOutbox } from "./lib/outbox.ts";
import { useRealtime } from "./lib/realtime.tsx";
import { Link, match, navigate, usePath } from "./lib/router.tsx";
import { ConfirmDialog, LanguageSelect, Loading } from "./components/ui.tsx";
import { SignIn } from "./SignIn.tsx";
import { DeliveriesPage } from "./features/deliveries/components/Deliveries.tsx";

const DeliveryPage = lazy(() => import("./features/deliveries/components/DeliveryPage.tsx"));
const NewDeliveryPage = lazy(() => import("./features/deliveries/components/NewDelivery.tsx"));
const DriversPage = lazy(() => import("./features/drivers/components/Drivers.tsx"));
const DriverDayPage = lazy(() => import("./features/drivers/components/DriverDay.tsx"));
const LiveMapPage = lazy(() => import("./features/drivers/components/LiveMap.tsx"));
const PricesPage = lazy(() => import("./features/money/components/Prices.tsx"));
const WithdrawalsPage = lazy(() => import("./features/money/components/Withdrawals.tsx"));
const WebhooksPage = lazy(() => import("./features/integrations/components/Webhooks.tsx"));
const IntegrationsPage = lazy(() => import("./features/integrations/components/Integrations.tsx"));
const GatewayPage = lazy(() => import("./features/integrations/components/Gateway.tsx"));
const BillingPage = lazy(() => import("./features/money/components/Billing.tsx"));
const SimulatorsPage = lazy(() => import("./features/simulators/components/Simulators.tsx"));
const NotificationSettingsPage = lazy(() => import("./features/notifications/components/Notifications.tsx"));
const DispatchBoard = lazy(() => import("./features/dispatch/components/DispatchBoard.tsx"));
const RoutesPage = lazy(() => import("./features/routes/components/Routes.tsx"));
const DispatchSettingsPage = lazy(() => import("./features/dispatch/components/DispatchSettings.tsx"));
// With its chart library: loaded only when opened, to keep the first load small.
const ReportsPage = lazy(() => import("./features/reports/components/Reports.tsx"));
const CashDayPage = lazy(() => import("./features/money/components/CashDay.tsx"));
const DriverHome = lazy(() => import("./features/driver-app/components/DriverHome.tsx"));
const WalletPage = lazy(() => import("./features/driver-app/components/Wallet.tsx"));
const DriverBar = lazy(() => import("./features/driver-app/components/DriverBar.tsx"));

interface PageDef {
  path: string;
  roles: Role[];
  nav?: NavKey;
  render: (params: Record<string, string>) => ReactNode;
  localOnly?: boolean;
}

type NavKey = `nav.${Exclude<keyof typeof ptBR.nav, "main">}`;

const DRIVER: Role[] = ["driver"];
const OWNER: Role[] = ["company_owner"];

const PAGES: PageDef[] = [
  { path: "/deliveries", roles: DELIVERY_MANAGERS, nav: "nav.deliveries", render: () => <DeliveriesPage /> },
  { path: "/deliveries/new", roles: DELIVERY_MANAGERS, nav: "nav.newDelivery", render: () => <NewDeliveryPage /> },
  { path: "/deliveries/:id", roles: DELIVERY_MANAGERS, render: (p) => <DeliveryPage id={p.id} /> },
  { path: "/drivers", roles: DELIVERY_MANAGERS, nav: "nav.drivers", render: () => <DriversPage /> },
  { path: "/drivers/:id/day", roles: COMPANY_MANAGERS, render: (p) => <DriverDayPage id={p.id} /> },
  { path: "/map", roles: DELIVERY_MANAGERS, nav: "nav.liveMap", render: () => <LiveMapPage /> },
  { path: "/dispatch", roles: DELIVERY_MANAGERS, nav: "nav.dispatch", render: () => <DispatchBoard /> },
  { path: "/routes", roles: DELIVERY_MANAGERS, nav: "nav.routes", render: () => <RoutesPage /> },
  { path: "/prices", roles: DELIVERY_MANAGERS, nav: "nav.prices", render: () => <PricesPage /> },
  { path: "/withdrawals", roles: COMPANY_MANAGERS, nav: "nav.withdrawals", render: () => <WithdrawalsPage /> },
  { path: "/webhooks", roles: COMPANY_MANAGERS, nav: "nav.webhooks", render: () => <WebhooksPage /> },
  {
    path: "/integrations",
    roles: COMPANY_MANAGERS,
    nav: "nav.integrations",
    render: () => <IntegrationsPage />,
  },
  { path: "/reports", roles: COMPANY_MANAGERS, nav: "nav.reports", render: () => <ReportsPage /> },
  { path: "/cash", roles: COMPANY_MANAGERS, nav: "nav.cash", render: () => <CashDayPage /> },
  { path: "/gateway", roles: OWNER, nav: "nav.gateway", render: () => <GatewayPage /> },
  { path: "/billing", roles: OWNER, nav: "nav.billing", render: () => <BillingPage /> },
  {
    path: "/notifications",
    roles: COMPANY_MANAGERS,
    nav: "nav.notifications",
    render: () => <NotificationSettingsPage />,
  },
  {
    path: "/dispatch/settings",
    roles: COMPANY_MANAGERS,
    nav: "nav.dispatchSettings",
    render: () => <DispatchSettingsPage />,
  },
  {
    path: "/simulators",
    roles: COMPANY_MANAGERS,
    nav: "nav.simulators",
    render: () => <SimulatorsPage />,
    localOnly: true,
  },
  { path: "/driver", roles: DRIVER, nav: "nav.driverHome", render: () => <DriverHome /> },
  { path: "/driver/wallet", roles: DRIVER, nav: "nav.wallet", render: () => <WalletPage /> },
];

const TrackPage = lazy(() => import("./features/tracking/components/TrackPage.tsx"));

/** Pages anyone may open without signing in: the recipient's tracking page. */
const PUBLIC_PAGES: { path: string; render: (params: Record<string, string>) => ReactNode }[] = [
  { path: "/track/:token", render: (p) => <TrackPage token={p.token} /> },
];

const home = (role: Role) => (role === "driver" ? "/driver" : "/deliveries");

/** Why the app cannot go on for this session, and the way out that fits: sign in again, try again, or sign out. */
function SessionProblem({ problem }: { problem: AuthProblem | null }) {
  const { t } = useTranslation();
  const { retry, signOut } = useAuth();
  const sentence = {
    rejected: t("auth.rejected"),
    noCompany: t("auth.noRole"),
    deactivated: t("auth.deactivated"),
    offline: t("auth.offline"),
    unavailable: t("auth.unavailable"),
  }[problem ?? "unavailable"];
  const canRetry = problem === "offline" || problem === "unavailable" || problem === null;
  return (
    <main className="center">
      <div className="card session-problem">
        <p role="alert" className="error">{sentence}</p>
        {canRetry && <button type="button" onClick={retry}>{t("auth.retry")}</button>}
        <button type="button" className={canRetry ? "secondary" : undefined} onClick={() => void signOut()}>
          {problem === "rejected" ? t("auth.signInAgain") : t("auth.signOut")}
        </button>
      </div>
    </main>
  );
}

/** Signing out, after a question when actions still wait on this device for a connection. */
function SignOutButton() {
  const { t } = useTranslation();
  const { signOut } = useAuth();
  const [waiting, setWaiting] = useState(0);
  return (
    <>
      <button
        type="button"
        onClick={() => {
          const count = outbox()?.snapshot().filter((i) => i.state !== "failed").length ?? 0;
          if (count > 0) setWaiting(count);
          else void signOut();
        }}
      >
        {t("auth.signOut")}
      </button>
      <ConfirmDialog
        open={waiting > 0}
        message={t("driver.signOutQueued", { count: waiting })}
        confirm={t("driver.signOutAnyway")}
        onConfirm={() => void signOut()}
        onClose={() => setWaiting(0)}
      />
    </>
  );
}

export function App() {
  const { t } = useTranslation();
  const { loading, identity, session, problem } = useAuth();
  const online = useOnline();
  const path = usePath();
  // The navigation on a narrow screen: closed behind the menu button, closed again once a page is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  const { connected } = useRealtime();
  useDriverOutbox(identity);

  const publicPage = PUBLIC_PAGES.map((p) => ({ page: p, params: match(p.path, path) })).find((p) => p.params);

  useEffect(() => {
    if (loading || publicPage) return;
    if (!session && path !== "/signin") navigate("/signin", true);
    if (identity && (path === "/" || path === "/signin")) navigate(home(identity.role), true);
  }, [loading, session, identity, path, publicPage]);

  if (publicPage) return <Suspense fallback={<Loading />}>{publicPage.page.render(publicPage.params!)}</Suspense>;

  if (loading) {
    return (
      <main className="center">
        <Loading />
      </main>
    );
  }
  if (!session) return <SignIn />;
  if (!identity) return <SessionProblem problem={problem} />;

  const pages = PAGES.filter((p) => !p.localOnly || config.localStack);
  let content: ReactNode = <p role="alert" className="error">{t("notFound")}</p>;
  for (const page of pages) {
    const params = match(page.path, path);
    if (!params) continue;
    content = can(identity, page.roles) ? page.render(params) : <p role="alert" className="error">{t("notAllowed")}</p>;
    // "/deliveries/new" is declared before "/deliveries/:id".
    break;
  }
  const nav = pages.filter((p) => p.nav && can(identity, p.roles));
  const isDriver = identity.role === "driver";

  return (
    <div className={isDriver ? "layout driver" : "layout panel"}>
      <a className="skip" href="#content">{t("skipToContent")}</a>
      <header className="top">
        <strong className="app-name">{t("appName")}</strong>
        <span className={connected && online ? "live on" : "live off"} role="status">
          {!online ? t("noConnection") : connected ? t("live") : t("offline")}
        </span>
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          {t("menu")}
        </button>
        <span className="who">
          {t("auth.signedInAs", { email: identity.email, role: t(`roles.${identity.role}`) })}
        </span>
        <div className="top-language">
          <LanguageSelect />
        </div>
        <SignOutButton />
      </header>
      <nav id="main-nav" className={menuOpen ? "nav open" : "nav"} aria-label={t("nav.main")}>
        <ul>
          {nav.map((p) => (
            <li key={p.path}>
              <Link to={p.path} onClick={() => setMenuOpen(false)}>{t(p.nav!)}</Link>
            </li>
          ))}
        </ul>
      </nav>
      {isDriver && (
        <Suspense>
          <DriverBar />
        </Suspense>
      )}
      <main id="content" className="content" tabIndex={-1}>
        <Suspense fallback={<Loading />}>{content}</Suspense>
      </main>
    </div>
  );
}
