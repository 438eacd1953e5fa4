/**
 * What never reaches a stored request or response body, and what an organization can ask to mask.
 *  - secrets, always: values of fields named like credentials (`authorization`, `api_key`, ...) and
 *    strings shaped like Switchboard's own secrets (gateway, master, platform and session keys) or
 *    common provider keys (OpenAI/Anthropic `sk-...`, Google `AIza...`, Groq `gsk_...`, xAI
 *    `xai-...`, AWS access key ids) and `Bearer <token>`;
 *  - personal data, when the organization turned on `compliance.redactBodies`: e-mail addresses,
 *    phone numbers and card numbers (13 to 19 digits passing the Luhn check).
 */

const SECRET_FIELD = /^(authorization|proxy-authorization|x-api-key|api[-_]?key|apikey|access[-_]?token|secret|client[-_]?secret|password)$/i;

const SECRET_PATTERNS: readonly RegExp[] = [
  /\bswb[ms]?_[A-Za-z0-9]{40}\b/g,
  /\bsk_[A-Za-z0-9]{40}\b/g,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\bgsk_[A-Za-z0-9]{20,}\b/g,
  /\bxai-[A-Za-z0-9]{20,}\b/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/gi,
];

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
/** Digit runs with spaces or dashes that may be a card number. */
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;
/** International or North American style numbers: at least 7 digits with separators. */
const PHONE = /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{2,4}[\s.-]\d{3,4}[\s.-]?\d{0,4}\b/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Secrets in one string replaced by `[secret]`. */
export function scrubSecretText(s: string): string {
  let out = s;
  for (const re of SECRET_PATTERNS) out = out.replace(re, "[secret]");
  return out;
}

/** E-mail addresses, card numbers and phone numbers in one string masked. */
export function redactPersonalText(s: string): string {
  return s
    .replace(EMAIL, "[email]")
    .replace(CARD_CANDIDATE, (m) => {
      const digits = m.replace(/\D/g, "");
      return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? "[card]" : m;
    })
    .replace(PHONE, (m) => (m.replace(/\D/g, "").length >= 7 ? "[phone]" : m));
}

/**
 * Whether a JSON text may hold something scrubValue would change: a secret field's name, a
 * secret's prefix, or a `\u` escape (which could spell either). Every SECRET_FIELD name and
 * SECRET_PATTERNS prefix must match here: a text without any is stored as it came, unparsed.
 */
const MAY_HOLD_SECRET = /\\u|authorization|api[-_]?key|access[-_]?token|secret|password|swb|sk[-_]|aiza|gsk_|xai-|akia|asia|bearer/i;
export const mayHoldSecret = (jsonText: string): boolean => MAY_HOLD_SECRET.test(jsonText);

/** A JSON.parse reviver doing what scrubValue does, in the parse itself (no second walk, no copies). */
export function scrubReviver(personal: boolean): (key: string, value: unknown) => unknown {
  return (key, value) => {
    if (SECRET_FIELD.test(key)) return "[secret]";
    if (typeof value !== "string") return value;
    const s = scrubSecretText(value);
    return personal ? redactPersonalText(s) : s;
  };
}

/** A JSON value with secrets removed (and personal data masked when `personal`); strings only are touched. */
export function scrubValue(v: unknown, personal: boolean): unknown {
  if (typeof v === "string") {
    const s = scrubSecretText(v);
    return personal ? redactPersonalText(s) : s;
  }
  if (Array.isArray(v)) return v.map((x) => scrubValue(x, personal));
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = SECRET_FIELD.test(k) ? "[secret]" : scrubValue(x, personal);
    return out;
  }
  return v;
}
