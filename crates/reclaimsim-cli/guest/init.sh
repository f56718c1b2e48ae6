#!/bin/sh
# PID 1 of `reclaimsim kernel`'s guest (busybox sh). It reads /plan (shell variables the
# host wrote from the scenario: crates/reclaimsim-cli/src/commands/kernel/plan.rs), sets
# the machine up (modules, swap, ext4 on brd, sysctls, lru_gen, memcgs and their limits,
# the workloads' files), starts the workloads, and prints counters on the console in
# lines that start with "@RS " (the host's parser reads only those):
#   @RS snap LABEL UPTIME / @RS endsnap LABEL   around a snapshot, taken when each
#       workload finishes its work (LABEL end:NAME, its memory still held: programs exit
#       only when every workload has finished), when all have (end:all, settled: see
#       settle) and at the end (its UPTIME when all had finished)
#   @RS vm KEY VALUE            /proc/vmstat
#   @RS cg PATH FILE KEY VALUE  memory.stat, memory.events(.local), memory.swap.events,
#                               memory.pressure; @RS cg PATH current|swap.current VALUE
#   @RS psi LINE                /proc/pressure/memory
#   @RS wl NAME ops=...         each workload's result line (the programs print it)
#   @RS phase NAME:PHASE UPTIME when a program's phase ended (the programs print it)
#   @RS start NAME UPTIME MEMCG / @RS exit NAME STATUS UPTIME   each workload's start
#                               and exit (its exit status)
#   @RS error TEXT, @RS done
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t cgroup2 none /sys/fs/cgroup
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mkdir -p /tmp /mnt
mount -t tmpfs -o size=16m tmpfs /tmp
. /plan

err() { echo "@RS error $*"; }
now() { cut -d' ' -f1 /proc/uptime; }
echo "@RS uname $(uname -r)"
echo "@RS begin $(now)"

ifconfig lo 127.0.0.1 up 2>/dev/null # the memtier-like client reaches memcached on it
for m in $RS_MODULES; do insmod /lib/modules/$m.ko 2>/dev/null || err "insmod $m failed"; done

# brd: every ramdisk the plan needs (swap on ram0 and/or ext4 on the next), one size
if [ "$RS_BRD_NR" -gt 0 ]; then
	[ -d /sys/block/ram0 ] || insmod /lib/modules/brd.ko rd_nr=$RS_BRD_NR rd_size=$((RS_BRD_MB * 1024)) 2>/dev/null
	[ -d /sys/block/ram0 ] || err "no brd ramdisk (brd module missing?)"
fi
case "$RS_SWAP" in
zram)
	[ -d /sys/block/zram0 ] || err "no zram device (zram module missing?)"
	echo "$RS_SWAP_BYTES" > /sys/block/zram0/disksize
	mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 || err "swapon zram0 failed" ;;
brd)
	# written in full first, so brd's pages for swap exist from the start
	dd if=/dev/zero of=/dev/ram0 bs=1M count=$((RS_SWAP_BYTES / 1048576)) 2>/dev/null
	mkswap /dev/ram0 $((RS_SWAP_BYTES / 1024)) >/dev/null && swapon /dev/ram0 || err "swapon ram0 failed" ;;
esac
echo 0 > /proc/sys/vm/page-cluster
if [ -n "$RS_FS_DEV" ]; then
	echo 0 > /sys/block/$RS_FS_DEV/queue/read_ahead_kb
	/sbin/mke2fs -t ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/$RS_FS_DEV >/dev/null || err "mke2fs failed"
	mount -t ext4 /dev/$RS_FS_DEV /mnt || err "mount ext4 failed"
fi

for s in $RS_SYSCTLS; do
	k=${s%%=*}; v=${s#*=}
	echo "$v" > /proc/sys/$(echo "$k" | tr . /) || err "sysctl $k=$v failed"
done
if [ -n "$RS_LRU_GEN" ]; then
	echo "$RS_LRU_GEN" > /sys/kernel/mm/lru_gen/enabled || err "lru_gen/enabled $RS_LRU_GEN failed"
	echo "$RS_MIN_TTL_MS" > /sys/kernel/mm/lru_gen/min_ttl_ms || err "lru_gen/min_ttl_ms failed"
	echo "@RS lru_gen $(cat /sys/kernel/mm/lru_gen/enabled)"
fi
echo "@RS thp $(cat /sys/kernel/mm/transparent_hugepage/enabled)"

C=/sys/fs/cgroup
for g in $RS_MEMCGS; do
	p=${g%/*}
	echo +memory > $C$p/cgroup.subtree_control || err "memory controller for $p failed"
	mkdir -p $C$g
done
for s in $RS_MEMCG_FILES; do # PATH:FILE:VALUE
	g=${s%%:*}; r=${s#*:}; f=${r%%:*}; v=${r#*:}
	echo "$v" > $C$g/$f || err "$g/$f=$v failed"
done

# files: NAME:MEMCG:COUNT:BYTES:SPARSE, written from the workload's memcg (or holes made
# with truncate when SPARSE is 1), then dropped from the page cache so the workload
# starts cold
for s in $RS_FILES; do
	n=${s%%:*}; r=${s#*:}; g=${r%%:*}; r=${r#*:}; k=${r%%:*}; r=${r#*:}; b=${r%%:*}; sp=${r#*:}
	if [ "$sp" = 1 ]; then
		make="truncate -s $b /mnt/$n.\$i"
	else
		make="dd if=/dev/zero of=/mnt/$n.\$i bs=4096 count=$((b / 4096)) 2>/dev/null"
	fi
	sh -c "echo \$\$ > $C$g/cgroup.procs; i=0; while [ \$i -lt $k ]; do $make || echo '@RS error writing /mnt/$n.'\$i; i=\$((i+1)); done"
done
sync
echo 3 > /proc/sys/vm/drop_caches

# ballast: lock what the guest has free beyond the scenario's memory, so the workloads
# start with the model's free memory (its machine starts with all of `memory` free);
# with NUMA nodes, on each node what it has beyond its share
echo "@RS nodes $(ls -d /sys/devices/system/node/node[0-9]* | wc -l)"
ballast() { # BYTES READY NODE
	/bin/ballast $1 $2 $3 > $2.out 2>&1 &
	while [ ! -f $2 ] && kill -0 $! 2>/dev/null; do sleep 0.1; done
	[ -f $2 ] || err "ballast of $1 bytes failed: $(cat $2.out)"
}
total=0
if [ "$RS_NODES" -gt 1 ]; then
	n=0
	while [ $n -lt $RS_NODES ]; do
		grep -E 'Mem(Total|Free|Used):|FilePages:|AnonPages:|Unevictable:|Slab:' /sys/devices/system/node/node$n/meminfo | sed 's/^/@RS nodemem /'
		free=$(awk '/MemFree:/ { print $4 * 1024 }' /sys/devices/system/node/node$n/meminfo)
		extra=$((free - RS_MEMORY / RS_NODES))
		[ $extra -gt 0 ] && ballast $extra /tmp/ballast.$n $n && total=$((total + extra))
		echo "@RS ballast_node $n $extra"
		n=$((n + 1))
	done
else
	free=$(awk '/^MemFree:/ { print $2 * 1024 }' /proc/meminfo)
	total=$((free - RS_MEMORY))
	[ $total -gt 0 ] && ballast $total /tmp/ballast.0 -1
fi
echo "@RS ballast $total"

# snap LABEL [UPTIME]: UPTIME (default now) is when the state it shows was reached
snap() {
	echo "@RS snap $1 ${2:-$(now)}"
	sed 's/^/@RS vm /' /proc/vmstat
	[ "$RS_LRU_GEN" != 0 ] && [ -r /sys/kernel/debug/lru_gen ] && sed 's/^/@RS lrugen /' /sys/kernel/debug/lru_gen
	for g in / $RS_MEMCGS; do
		d=$C${g%/}
		for f in stat events events.local swap.events; do
			[ -f $d/memory.$f ] && sed "s|^|@RS cg $g $f |" $d/memory.$f
		done
		[ -f $d/memory.pressure ] && sed "s|^|@RS cg $g pressure |" $d/memory.pressure
		[ -f $d/memory.current ] && echo "@RS cg $g current $(cat $d/memory.current)"
		[ -f $d/memory.swap.current ] && echo "@RS cg $g swap.current $(cat $d/memory.swap.current)"
	done
	sed 's/^/@RS psi /' /proc/pressure/memory
	grep -E '^(MemTotal|MemFree|Cached|SwapTotal|SwapFree|AnonPages):' /proc/meminfo | sed 's/^/@RS meminfo /'
	echo "@RS endsnap $1"
}

# settle: 6.1's memory.stat folds the per-CPU counts first only when enough are pending
# (mem_cgroup_flush_stats: stats_flush_threshold past the online CPUs, each a batch of
# 64 updates), so it can lag by a few hundred updates; flush_memcg_stats_dwork folds
# them all every 2 s (FLUSH_TIME). Wait out one period where nothing runs before the
# snapshots whose memcg counters are results: setup, and end:all (below).
settle() { sleep 2.5; }

settle
snap setup
T0=$(now)
next_sample=$RS_SAMPLE
i=0
while [ $i -lt $RS_NWL ]; do
	eval "n=\$RS_WL_${i}_NAME g=\$RS_WL_${i}_MEMCG st=\$RS_WL_${i}_START af=\$RS_WL_${i}_AFTER cmd=\$RS_WL_${i}_CMD"
	(
		[ "$st" != 0 ] && sleep $st
		# AFTER is a workload or WORKLOAD:PHASE (the program creates /tmp/fin.WORKLOAD:PHASE
		# when the phase ends); a workload that exits first releases its waiters
		if [ -n "$af" ]; then while [ ! -f /tmp/fin.$af ] && [ ! -f /tmp/exit.${af%%:*} ]; do sleep 0.1; done; fi
		echo "@RS start $n $(now) $g"
		sh -c "echo \$\$ > $C$g/cgroup.procs; exec $cmd" > /tmp/wl.$n.out 2>&1
		echo "$? $(now)" > /tmp/exit.$n.t && mv /tmp/exit.$n.t /tmp/exit.$n
	) &
	i=$((i + 1))
done

# Wait for every workload; snapshot each as it finishes its work. A finished program
# holds its memory (it waits for go.NAME) until every workload has finished, as the
# model's finished workloads keep theirs to the run's end; then all exit. Stop them all
# at the plan's duration.
while :; do
	left=0
	busy=0
	i=0
	while [ $i -lt $RS_NWL ]; do
		eval "n=\$RS_WL_${i}_NAME"
		if [ -f /tmp/fin.$n ] && [ ! -f /tmp/snapped.$n ]; then
			snap end:$n
			touch /tmp/snapped.$n
		fi
		# a phase's end (anon and memtier create /tmp/fin.NAME:PHASE): its counters
		for f in /tmp/fin.$n:*; do
			[ -f "$f" ] || continue
			p=${f#/tmp/fin.}
			if [ ! -f "/tmp/snapped.$p" ]; then
				snap "phase:$p"
				touch "/tmp/snapped.$p"
			fi
		done
		[ -f /tmp/fin.$n ] || [ -f /tmp/exit.$n ] || busy=$((busy + 1))
		[ -f /tmp/exit.$n ] || left=$((left + 1))
		i=$((i + 1))
	done
	if [ $busy = 0 ]; then
		# every workload has finished and holds its memory: their levels, settled
		if [ ! -f /tmp/snapped.all ]; then
			fin=$(now)
			settle
			snap end:all $fin
			touch /tmp/snapped.all
		fi
		i=0
		while [ $i -lt $RS_NWL ]; do
			eval "n=\$RS_WL_${i}_NAME"
			[ -f /tmp/fin.$n ] && touch /tmp/go.$n
			i=$((i + 1))
		done
	fi
	[ $left = 0 ] && break
	# sample_interval: a `sample` snapshot every RS_SAMPLE seconds of guest time
	if [ "$RS_SAMPLE" != 0 ] && awk -v t="$(now)" -v t0="$T0" -v n="$next_sample" 'BEGIN { exit !(t - t0 >= n) }'; then
		snap sample
		next_sample=$(awk -v n="$next_sample" -v s="$RS_SAMPLE" 'BEGIN { print n + s }')
	fi
	if [ "$RS_DURATION" != 0 ] && [ ! -f /tmp/stop.all ]; then
		awk -v t="$(now)" -v t0="$T0" -v d="$RS_DURATION" 'BEGIN { exit !(t - t0 >= d) }' && touch /tmp/stop.all
	fi
	sleep 0.2
done
snap end $fin
i=0
while [ $i -lt $RS_NWL ]; do
	eval "n=\$RS_WL_${i}_NAME"
	grep '^@RS ' /tmp/wl.$n.out
	grep -v '^@RS ' /tmp/wl.$n.out | head -5 | sed "s|^|@RS log $n |"
	echo "@RS exit $n $(cat /tmp/exit.$n)"
	i=$((i + 1))
done
echo "@RS done $(now)"
sync
poweroff -f
