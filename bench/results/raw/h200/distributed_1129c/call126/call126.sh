#!/usr/bin/env bash
# Call 126: the GPU host's huge-page settings and what faulting 222 MB costs there.
. scripts/gpu-env.sh > /dev/null
uname -r
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled); defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
nproc
.gpu/pf/pf
