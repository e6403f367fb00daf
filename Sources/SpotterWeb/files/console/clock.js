// The browser's clocks. The server keeps time for everything it decides; the page reads a clock only to draw (is
// a session still upcoming, is "typing…" over, is a time today, messages per second) and to space its typing
// notices. The browser's clocks are the only ones it has; every read goes through these two functions.

/** Milliseconds since the Unix epoch, by the browser's wall clock. */
export function nowMs() {
  return Date.now();
}

/** Milliseconds on a clock that only moves forward (for rates between two readings), by the browser. */
export function monotonicMs() {
  return performance.now();
}
