import type { Pool } from 'pg';
import { generateToken, hashToken, tokenHint } from '../../lib/tokens.js';

export interface ServiceAccount {
  id: string;
  projectId: string;
  name: string;
  tokenHint: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = 'id::text, project_id, name, token_hint, created_at, expires_at, revoked_at';

function toAccount(r: Record<string, any>): ServiceAccount {
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    tokenHint: r.token_hint,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

export function serviceAccountsRepository(pool: Pool) {
  return {
    /** The token is returned once and never stored. */
    async create(projectId: string, name: string, expiresAt: Date | null): Promise<{ account: ServiceAccount; token: string }> {
      const token = generateToken();
      const { rows } = await pool.query(
        `INSERT INTO service_accounts (project_id, name, token_hash, token_hint, expires_at)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
        [projectId, name, hashToken(token), tokenHint(token), expiresAt],
      );
      return { account: toAccount(rows[0]), token };
    },

    async findByToken(token: string): Promise<ServiceAccount | null> {
      const { rows } = await pool.query(`SELECT ${COLUMNS} FROM service_accounts WHERE token_hash = $1`, [hashToken(token)]);
      return rows[0] ? toAccount(rows[0]) : null;
    },

    async list(projectId?: string): Promise<ServiceAccount[]> {
      const { rows } = await pool.query(
        `SELECT ${COLUMNS} FROM service_accounts WHERE ($1::text IS NULL OR project_id = $1) ORDER BY id`,
        [projectId ?? null],
      );
      return rows.map(toAccount);
    },

    async revoke(id: string, projectId?: string): Promise<ServiceAccount | null> {
      const { rows } = await pool.query(
        `UPDATE service_accounts SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1::bigint AND ($2::text IS NULL OR project_id = $2) RETURNING ${COLUMNS}`,
        [id, projectId ?? null],
      );
      return rows[0] ? toAccount(rows[0]) : null;
    },
  };
}

export type ServiceAccountsRepository = ReturnType<typeof serviceAccountsRepository>;
