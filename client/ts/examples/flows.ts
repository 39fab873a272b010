// The main flows of an integration through the TypeScript client, against
// the payd at PAYD_URL (its /api) with an AUD app's PAYD_APP_ID and
// PAYD_SECRET_KEY: an access token, a contact and a 50.00 AUD PayID payin
// completed by the sandbox, the balance, a 25.00 payout read back, the
// balance history and a webhook endpoint. It prints what it read, one line
// each, and exits non-zero at the first answer that is not the one expected.
// internal/e2e's TestTypeScriptClient runs it.
import { createPaydClient } from "../src/index.js";

// Node's process, declared here rather than through @types/node.
declare const process: { env: Record<string, string | undefined> };

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

function check(what: string, got: unknown, want: unknown): void {
  if (got !== want) throw new Error(`${what} = ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  console.log(`${what} ${String(got)}`);
}

/** need is the answer's data, or an error with payd's error body. */
function need<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined) throw new Error(`${what}: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data;
}

const baseUrl = env("PAYD_URL");
const keys = createPaydClient(baseUrl, { appId: env("PAYD_APP_ID"), secretKey: env("PAYD_SECRET_KEY") });
const token = need("access token", await keys.GET("/v1/payment_gateways/access_token"));
const payd = createPaydClient(baseUrl, { token: token.access_token });

need("contact", await payd.POST("/v2/contacts", {
  body: { email: "ts@example.com", first_name: "Tess", last_name: "Payer" },
}));
const payin = need("payin", await payd.POST("/v2/payins", {
  params: { header: { "Idempotency-Key": "ts-pin-1" } },
  body: {
    currency: "AUD", amount: "50.00", payin_method_name: "au_payid_npp_aud", name: "Tess Payer",
    email: "ts@example.com", description: "Order 43", payin_method_params: { callback_url: "https://shop.example/return" },
  },
}));
check("payin.status", payin.status, "pending");

need("simulate", await payd.POST("/v2/payins/simulate", { body: { uuid: payin.uuid, status: "completed" } }));
const received = need("payin detail", await payd.GET("/v2/payins/detail", { params: { query: { uuid: payin.uuid } } }));
check("payin.status", received.status, "received");

const advance = async (seconds: number) =>
  need("clock", await payd.POST("/v2/sandbox/clock", { body: { advance_seconds: seconds } }));
const available = async () =>
  need("balance", await payd.GET("/v2/balances/detail", { params: { query: { currency: "AUD" } } })).available_balance;

await advance(0);
check("available", await available(), 49.75);

const created = need("payout", await payd.POST("/v2/payouts", {
  params: { header: { "Idempotency-Key": "ts-po-1" } },
  body: {
    currency: "AUD", payout_method_name: "au_bank_aud", description: "Supplier invoice 18",
    payout_transaction_details: [{
      first_name: "Jane", last_name: "Doe", amount: "25.00",
      payout_method_params: { bsb: "062000", account_number: "12345678", account_name: "Jane Doe" },
    }],
  },
}));
await advance(0);
await advance(10);
const payout = need("payout detail", await payd.GET("/v2/payouts/detail", { params: { query: { uuid: created.uuid } } }));
check("payout.status", payout.status, "completed");
check("payout.total_fees", payout.total_fees, "0.50");
check("available", await available(), 24.25);

const history = need("history", await payd.GET("/v2/balances/history", { params: { query: { currency: "AUD" } } }));
const refs = new Set((history.records ?? []).map((r) => r.reference_id));
check("history has the payin", refs.has(payin.uuid), true);
check("history has the payout", refs.has(created.uuid), true);

const endpoint = need("webhook endpoint", await payd.POST("/v2/webhook_endpoints", {
  body: { url: "https://shop.example/payd-webhooks", enabled_events: ["payin.received"], description: "shop" },
}));
check("webhook secret is whsec_", endpoint.secret.startsWith("whsec_"), true);
console.log("ok");
