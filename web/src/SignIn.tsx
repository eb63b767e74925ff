import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { supabase } from "./lib/supabase.ts";
import { ErrorNote, Field, LanguageSelect } from "./components/ui.tsx";

export function SignIn() {
  const { t } = useTranslation();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<"auth.wrongPassword" | "auth.failed" | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const { error } = await supabase.auth.signInWithPassword({ email, password }).catch(() => ({
      error: { status: 0, code: "network" },
    }));
    setBusy(false);
    if (!error) return;
    const code = (error as { code?: string }).code;
    setError(
      code === "invalid_credentials" || (error as { status?: number }).status === 400
        ? "auth.wrongPassword"
        : "auth.failed",
    );
  }

  return (
    <main className="center">
      <form className="card signin" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">{t("auth.title")}</h1>
        <Field
          label={t("auth.email")}
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          autoFocus
        />
        <Field
          label={t("auth.password")}
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <ErrorNote error={error && t(error)} />
        <button type="submit" disabled={busy}>{busy ? t("auth.signingIn") : t("auth.submit")}</button>
      </form>
      <div className="signin-language">
        <LanguageSelect />
      </div>
    </main>
  );
}
