import { createHash, randomBytes } from 'node:crypto';

// 32 random bytes = 256 bits; the prefix makes leaked tokens easy to find with secret scanners.
const TOKEN_RE = /^rh_[A-Za-z0-9_-]{43}$/;

export function generateToken(): string {
  return `rh_${randomBytes(32).toString('base64url')}`;
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** Tokens carry 256 bits of entropy, so a plain SHA-256 is a safe and fast lookup key. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export function tokenHint(token: string): string {
  return `${token.slice(0, 7)}…${token.slice(-4)}`;
}
