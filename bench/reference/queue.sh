#!/bin/bash
# usage: queue.sh JOBFILE DEADLINE_EPOCH  — runs "dataset method noise seed T" lines one at a time,
# skipping lines already claimed (claim file) so that two queue.sh processes share one job file.
cd "${REFRUN:-/work/refrun}"
JOBS=$1; DEADLINE=$2
while true; do
  [ "$(date +%s)" -ge "$DEADLINE" ] && break
  line=$( (flock 9; while read -r l; do grep -qxF "$l" out/claimed.txt 2>/dev/null || { echo "$l" >> out/claimed.txt; echo "$l"; break; }; done < "$JOBS") 9>out/lock )
  [ -z "$line" ] && break
  set -- $line
  log=out/log_$1_$2_$3_$4_$5.txt
  ( time OMP_NUM_THREADS=1 TF_USE_LEGACY_KERAS=1 nice -n 10 /work/venv-tf/bin/python driver.py $1 $2 $3 $4 $5 ) > $log 2>&1
done
