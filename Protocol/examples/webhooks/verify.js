// Checks a Spotter webhook delivery's signature (Protocol/README.md, "Webhooks"). Node's crypto only.
//
//   verify(secret, header, body) -> boolean
//
// `header` is the `Spotter-Signature` header, `body` the raw request body as a Buffer (exactly as received: do not
// parse and re-serialize it first), `secret` the endpoint's `whsec_…` secret.
const crypto = require("node:crypto");

const TOLERANCE_SECONDS = 300;

function verify(secret, header, body, nowSeconds = Date.now() / 1000) {
  let timestamp = null;
  const signatures = [];
  for (const part of header.split(",")) {
    const [key, value = ""] = part.trim().split(/=(.*)/s);
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value);
    else if (key === "v1") signatures.push(value);
  }
  if (timestamp === null || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) return false; // too old: a captured delivery sent again
  const expected = crypto.createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
  return signatures.some((candidate) => {
    const given = Buffer.from(candidate, "hex");
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

module.exports = { verify };

if (require.main === module) {
  // node verify.js SECRET HEADER < body  → exit 0 when the signature is good
  const chunks = [];
  process.stdin.on("data", (chunk) => chunks.push(chunk));
  process.stdin.on("end", () => process.exit(verify(process.argv[2], process.argv[3], Buffer.concat(chunks)) ? 0 : 1));
}
