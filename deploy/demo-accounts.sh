#!/usr/bin/env bash
# Makes a coach and a client linked by a conversation, on a running server, so you can open /console/ in two
# browser windows and chat at once. Prints the two sign-ins. Safe to run twice (an existing account signs in).
#   deploy/demo-accounts.sh [http://127.0.0.1:8080]
set -euo pipefail
B=${1:-${SPOTTER_URL:-http://127.0.0.1:8080}}
PASSWORD=${DEMO_PASSWORD:-demo-pass}

json() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }
post() { curl -sS -X "$1" "$B$2" -H 'Content-Type: application/json' ${3:+-H "Authorization: Bearer $3"} -d "$4"; }

# Signs up, or signs in when the email is taken; prints the session JSON.
account() {
    local role=$1 name=$2 email=$3 answer
    answer=$(post POST /v1/auth/signup "" "{\"role\":\"$role\",\"full_name\":\"$name\",\"email\":\"$email\",\"password\":\"$PASSWORD\",\"password_confirmation\":\"$PASSWORD\"}")
    if ! grep -q access_token <<<"$answer"; then
        answer=$(post POST /v1/auth/signin "" "{\"email\":\"$email\",\"password\":\"$PASSWORD\"}")
    fi
    grep -q access_token <<<"$answer" || { echo "demo-accounts: cannot sign up or in $email: $answer" >&2; exit 1; }
    echo "$answer"
}

curl -sSf "$B/healthz" >/dev/null || { echo "demo-accounts: no Spotter at $B (start it with deploy/run-server.sh)" >&2; exit 1; }
COACH=$(account coach "Carter Coach" coach@demo.test)
CLIENT=$(account client "Sara Client" client@demo.test)
COACH_ID=$(json '["user"]["id"]' <<<"$COACH")
CLIENT_TOKEN=$(json '["access_token"]' <<<"$CLIENT")
post PUT /v1/me/onboarding "$CLIENT_TOKEN" '{"date_of_birth":"1995-06-15","gender":"female","height_cm":165,"weight_kg":70,"goal":"Run 5 km","experience_level":"beginner","dietary_restrictions":[],"medical_conditions":[]}' >/dev/null
LINK=$(post POST /v1/me/coach "$CLIENT_TOKEN" "{\"coach_id\":\"$COACH_ID\"}")
grep -q thread_id <<<"$LINK" || grep -q coach_already_assigned <<<"$LINK" || { echo "demo-accounts: linking failed: $LINK" >&2; exit 1; }

cat <<TEXT
Open $B/console/ in two browser windows (one private) and sign in:
  coach   coach@demo.test   $PASSWORD
  client  client@demo.test  $PASSWORD
TEXT
