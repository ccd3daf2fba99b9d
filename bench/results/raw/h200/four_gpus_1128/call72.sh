#!/usr/bin/env bash
# Call 72 (2026-11-28, the 2-GPU kind): call 70's one-GPU whole commands again on another
# machine (the final code, 42de9df), for the median of two calls; the tests not repeated.
SKIP_CLUSTER_TESTS=1 bash .gpu/call70.sh "$1"
