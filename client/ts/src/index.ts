// payd's official TypeScript client: openapi-fetch over the types that
// openapi-typescript generates from payd's OpenAPI document (schema.d.ts).
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { paths } from "./schema.js";

export type { paths, components, operations } from "./schema.js";

/** How a call is authenticated: an app's keys, or an access token made from them. */
export type Auth = { appId: string; secretKey: string } | { token: string };

/** PaydClient calls payd's API; each path and its bodies are typed by the document. */
export type PaydClient = Client<paths>;

/**
 * createPaydClient is a client of the API at baseUrl ("http://127.0.0.1:8080/api")
 * that sends auth on every request.
 */
export function createPaydClient(baseUrl: string, auth: Auth): PaydClient {
  const client = createClient<paths>({ baseUrl });
  const authenticate: Middleware = {
    onRequest({ request }) {
      if ("token" in auth) {
        request.headers.set("Authorization", `Bearer ${auth.token}`);
      } else {
        request.headers.set("app-id", auth.appId);
        request.headers.set("secret-key", auth.secretKey);
      }
      return request;
    },
  };
  client.use(authenticate);
  return client;
}
