"""``sourcedesk sandbox`` — run the offline Exa + Perplexity stand-in on loopback.

Prints the base URL and the two environment variables that point sourcedesk at it,
then serves until Ctrl-C (which ends it cleanly, exit code 0).
"""

from __future__ import annotations

import errno
import sys

from sourcedesk.core.domain.errors import UserError


def register(sub) -> None:
    from sourcedesk.sandbox.faults import DEFAULT_HOLD_S, FAULT_KINDS
    from sourcedesk.sandbox.server import DEFAULT_PORT, EXA_REQUESTS_PER_SECOND, WRITER_REQUESTS_PER_MINUTE

    p = sub.add_parser(
        "sandbox",
        help="run the offline Exa/Perplexity sandbox server",
        description="Serve Exa's /search and Perplexity's Agent API (/v1/agent, /v1/responses; the legacy "
        "/chat/completions too) over the bundled corpus, on loopback, with optional latency and faults.",
        epilog="Fault kinds: "
        + "; ".join(f"{k} = {v}" for k, v in FAULT_KINDS.items())
        + ". Spec: [exa:|writer:]KIND[*N] — *N fails only the next N requests, then recovers.",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--latency-ms", type=int, default=0, metavar="N", help="added delay for both services")
    p.add_argument("--exa-latency-ms", type=int, default=None, metavar="N", help="added delay for Exa only")
    p.add_argument("--writer-latency-ms", type=int, default=None, metavar="N", help="added delay for the writer only")
    p.add_argument(
        "--fault", action="append", default=[], metavar="SPEC", help="inject a fault, e.g. exa:429*2 (repeatable)"
    )
    p.add_argument(
        "--fault-hold-s",
        type=float,
        default=DEFAULT_HOLD_S,
        metavar="S",
        help=f"how long the 'timeout' fault holds a request (default {DEFAULT_HOLD_S:g})",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed for the deterministic quirks (blank titles, 'null' facts…)"
    )
    p.add_argument(
        "--exa-rps",
        type=int,
        default=EXA_REQUESTS_PER_SECOND,
        metavar="N",
        help=f"Exa rate limit in requests per second (default {EXA_REQUESTS_PER_SECOND}; 0 disables)",
    )
    p.add_argument(
        "--writer-rpm",
        type=int,
        default=WRITER_REQUESTS_PER_MINUTE,
        metavar="N",
        help=f"writer rate limit in requests per minute (default {WRITER_REQUESTS_PER_MINUTE}, sonar-pro's entry tier; 0 disables)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log one line per request to stderr")
    p.set_defaults(func=_run)


def _announce(server) -> None:
    ctx = server.ctx
    lines = [
        f"sourcedesk sandbox listening on {server.url}  ({len(ctx.pages)} corpus pages, seed {ctx.seed})",
        "Point sourcedesk at it:",
        f"  export SOURCEDESK_EXA_URL={server.url} SOURCEDESK_WRITER_URL={server.url}",
        "  export EXA_API_KEY=sandbox PERPLEXITY_API_KEY=sandbox   # any non-empty key is accepted",
        "Serves: POST /search (Exa), POST /v1/agent and /v1/responses (Perplexity Agent API), "
        "POST /chat/completions (legacy Sonar, OpenAI-compatible)",
    ]
    latency = {k: v for k, v in ctx.latency_ms.items() if v}
    if latency:
        lines.append("Latency: " + ", ".join(f"{k} {v} ms" for k, v in latency.items()))
    limits = [f"{name} {limit.limit} per {limit.window_s:g} s" for name, limit in ctx.rate_limits.items()]
    if limits:
        lines.append("Rate limits: " + ", ".join(limits))
    if ctx.faults.rules:
        lines.append("Faults: " + ", ".join(ctx.faults.specs()))
    lines.append("Press Ctrl-C to stop.")
    print("\n".join(lines), flush=True)


def _run(args) -> int:
    from sourcedesk.sandbox.server import serve_forever

    for name in ("port", "latency_ms", "exa_latency_ms", "writer_latency_ms", "exa_rps", "writer_rpm"):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise UserError(f"--{name.replace('_', '-')} must not be negative (got {value}).")
    base = args.latency_ms
    latency = {
        "exa": base if args.exa_latency_ms is None else args.exa_latency_ms,
        "writer": base if args.writer_latency_ms is None else args.writer_latency_ms,
    }
    try:
        serve_forever(
            port=args.port,
            latency_ms=latency,
            faults=args.fault,
            seed=args.seed,
            exa_rps=args.exa_rps or None,
            writer_rpm=args.writer_rpm or None,
            fault_hold_s=args.fault_hold_s,
            verbose=args.verbose,
            on_ready=_announce,
        )
    except ValueError as exc:  # a bad --fault spec
        raise UserError(str(exc), "Example: --fault exa:429*2 --fault writer:timeout") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UserError(
                f"port {args.port} is already in use.", "Pick another with --port N, or --port 0 for any free port."
            ) from None
        raise UserError(f"could not start the sandbox: {exc.strerror or exc}") from None
    print("sourcedesk sandbox stopped.", file=sys.stderr)
    return 0
