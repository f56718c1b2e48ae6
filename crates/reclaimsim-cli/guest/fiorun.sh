#!/bin/sh
# fiorun: the host's fio in the guest (reclaimsim kernel --fio-program). Runs
# /bin/fio on the job file the plan wrote, with its JSON result in /tmp, and stops it
# with SIGINT (fio then ends its jobs and still writes its result) when a stop file
# appears, as the guest's own programs stop. Then prints fio's JSON, each line as
# `@RS fio NAME LINE`, for the host to read, and holds on as the others do: touches
# FIN and waits for GO (or /tmp/stop.all) before it exits with fio's status (0 when it
# was stopped).
#
#   fiorun -n NAME -c JOBFILE [-x STOPFILE]... [-f FIN -g GO]
name=fio job= fin= go= stops=
while [ $# -ge 2 ]; do
	case $1 in
	-n) name=$2 ;;
	-c) job=$2 ;;
	-x) stops="$stops $2" ;;
	-f) fin=$2 ;;
	-g) go=$2 ;;
	*) echo "fiorun: unknown option $1"; exit 2 ;;
	esac
	shift 2
done
out=/tmp/fio.$name.json
/bin/fio --output-format=json --output=$out $job &
pid=$!
# fio installs its SIGINT handler only once it has started (under TCG, loading its
# libraries takes a second or more), and a background job of this shell starts with
# SIGINT ignored: so the signal is sent again every half second until fio's result
# says it was heard ("terminating on signal"), and never after (a signal while fio
# writes its JSON would put the message inside it).
stopped=0
tick=0
while kill -0 $pid 2>/dev/null; do
	if [ $stopped = 0 ]; then
		for s in $stops; do
			[ -f $s ] && stopped=1
		done
	fi
	if [ $stopped = 1 ] && [ $((tick % 5)) = 0 ] && ! grep -q "terminating on signal" $out 2>/dev/null; then
		kill -INT $pid 2>/dev/null
	fi
	tick=$((tick + 1))
	sleep 0.1
done
wait $pid
status=$?
[ $stopped = 1 ] && status=0
[ -f $out ] && sed "s|^|@RS fio $name |" $out
if [ -n "$fin" ]; then
	touch $fin
	while [ -n "$go" ] && [ ! -f $go ] && [ ! -f /tmp/stop.all ]; do sleep 0.05; done
fi
exit $status
