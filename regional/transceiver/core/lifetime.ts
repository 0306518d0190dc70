// When a session must end on a timer (pure): maximum duration, no DTLS within the setup timeout,
// no consent (an authenticated check or response) within the consent timeout. Times are ms.

export interface LifetimeLimits {
  maxSessionMs: number;
  setupTimeoutMs: number;
  consentTimeoutMs: number;
}

export interface LifetimeMarks {
  createdAt: number;
  /** 0 until DTLS connected. */
  dtlsConnectedAt: number;
  /** 0 until the first consent; then the latest. */
  lastConsentAt: number;
  /** An ICE restart in progress suspends the consent timer. */
  restarting: boolean;
}

export type LifetimeEnd = "max_duration" | "setup_timeout" | "consent_lost";

export function lifetimeEnd(now: number, m: LifetimeMarks, l: LifetimeLimits): LifetimeEnd | undefined {
  if (now - m.createdAt >= l.maxSessionMs) return "max_duration";
  if (m.dtlsConnectedAt === 0 && now - m.createdAt >= l.setupTimeoutMs) return "setup_timeout";
  if (m.lastConsentAt > 0 && !m.restarting && now - m.lastConsentAt >= l.consentTimeoutMs)
    return "consent_lost";
  return undefined;
}
