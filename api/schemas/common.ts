import { Type } from '@sinclair/typebox';

export const ErrorBody = Type.Object(
  { message: Type.String({ description: 'Human-readable description of the error.' }) },
  { $id: 'ErrorBody', title: 'Error' },
);

/** The error responses every authenticated route can give, for the OpenAPI document. */
export const authErrors = {
  401: { description: 'Missing, malformed, unknown, expired or revoked token.', ...ErrorBody },
  403: { description: 'The token belongs to another project.', ...ErrorBody },
};

export function errorResponse(description: string) {
  return { description, ...ErrorBody };
}

/** A response that is the app's own: its status, content type and bytes, passed through untouched. */
export const appPassthroughResponse = Type.Unknown({
  description: "The app's response as the app sent it: its status code, Content-Type and body bytes (X-Run-Id header added).",
});
