"""The one outbound HTTP wrapper for the whole project (mock it at this seam, nowhere else).

Every request a watch (or anything else) sends to the outside goes through `HttpClient`:

- SSRF guard: the host is resolved here, every address is checked (loopback, private,
  link-local, cloud metadata, CGNAT, multicast, reserved… are refused unless
  WATCH_HTTP_ALLOW_NETWORKS permits them), and the connection is then made to the checked
  address itself (the URL is rewritten to the IP, with the Host header and TLS SNI kept to
  the name), so a DNS answer that changes between the check and the connect (rebinding)
  cannot send the request elsewhere. Redirects are followed by hand, and each hop is checked
  the same way.
- Limits: connect/read timeouts, an overall deadline per request, and a cap on the body size
  (read as a stream, so a huge body is cut off rather than buffered).
- Per-host politeness: at most N requests in flight to one host, a minimum interval between
  request starts to one host, and a "blocked until" a host asked us to wait (Retry-After):
  later requests to that host fail fast with `retry_after` rather than sleeping, so one slow
  or throttling host never holds a worker that others need.
- Cookies only where the caller asks for them: a request may carry a caller-owned jar
  (`cookies=`, e.g. one wiki login session), matched against the URL's real host name; the
  per-host connection pools keep none, so no cookie leaks from one caller to another.
- Counters (requests, bytes) for the benchmark and the admin.

The package: `base` (settings, errors, Response), `guard` (the SSRF guard), `transport` (the
deadline and the capped decoder), `client` (HttpClient). It imports httpx, httpcore, the standard
library and lib's own settings mechanism, never an app; import each name from the module that
defines it.
"""
