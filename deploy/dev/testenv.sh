# shellcheck shell=bash
# deploy/dev/testenv.sh — the set-up of `make test` on any machine, sourced by
# the Makefile's test target (`. deploy/dev/testenv.sh`) so that what it
# exports reaches the tests and its EXIT trap stops what it started:
#
# 1. Debian packages the tests use, installed with apt-get when missing and run
#    as root (otherwise the missing ones are named; their tests skip or fail
#    saying why).
# 2. PostgreSQL: INTAKE_TEST_DATABASE_URL when set; else the server answering
#    on 127.0.0.1:5432; else a private throwaway cluster started from the
#    local server binaries on a free port, stopped and deleted when `make test`
#    ends. INTAKE_TESTENV_PROBE_ADDR (default 127.0.0.1:5432) is the address
#    probed, so the private path can be tried on a machine whose PostgreSQL
#    must keep running (INTAKE_TESTENV_PROBE_ADDR=127.0.0.1:1).
#
# Never stops or reconfigures a PostgreSQL it did not start.

testenv_log() { printf '[testenv] %s\n' "$*" >&2; }

testenv_packages() {
	local need=()
	command -v pdftotext >/dev/null || need+=(poppler-utils)
	command -v tesseract >/dev/null || need+=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu)
	if command -v tesseract >/dev/null; then
		local langs
		langs=$(tesseract --list-langs 2>/dev/null)
		grep -qx eng <<<"$langs" || need+=(tesseract-ocr-eng)
		grep -qx deu <<<"$langs" || need+=(tesseract-ocr-deu)
	fi
	command -v xmllint >/dev/null || need+=(libxml2-utils)
	# protoc + well-known types: the test that generated code is current.
	command -v protoc >/dev/null || need+=(protobuf-compiler)
	[ -f /usr/include/google/protobuf/timestamp.proto ] || need+=(libprotobuf-dev)
	command -v prlimit >/dev/null || need+=(util-linux)
	# Headless Chromium drives the ops console's browser test.
	command -v chromium >/dev/null || need+=(chromium)
	# The C++ poppler binding (cgo) and its build tools.
	command -v g++ >/dev/null || need+=(g++)
	command -v pkg-config >/dev/null || need+=(pkg-config)
	[ -f /usr/include/poppler/cpp/poppler-document.h ] || need+=(libpoppler-cpp-dev)
	compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
	# Dovecot: the mailbox intake's tests start one on a free loopback port.
	command -v dovecot >/dev/null || need+=(dovecot-imapd)
	[ ${#need[@]} -eq 0 ] && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		testenv_log "apt-get install ${need[*]}"
		apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
			{ testenv_log "apt-get install failed"; return 1; }
	else
		testenv_log "missing Debian packages (install them as root, or their tests skip or fail): ${need[*]}"
	fi
}

# testenv_answers HOST:PORT: something accepts TCP connections there.
testenv_answers() {
	local host=${1%:*} port=${1##*:}
	if command -v pg_isready >/dev/null; then
		pg_isready -q -h "$host" -p "$port" -t 3
		# 0 accepting, 1 rejecting (starting up): both are a server.
		[ $? -le 1 ]
		return
	fi
	timeout 3 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null
}

testenv_free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		testenv_answers "127.0.0.1:$p" || { echo "$p"; return 0; }
	done
	return 1
}

testenv_postgres() {
	if [ -n "${INTAKE_TEST_DATABASE_URL:-}" ]; then
		testenv_log "PostgreSQL: INTAKE_TEST_DATABASE_URL"
		return 0
	fi
	local probe=${INTAKE_TESTENV_PROBE_ADDR:-127.0.0.1:5432}
	if testenv_answers "$probe"; then
		export INTAKE_TEST_DATABASE_URL="postgres://postgres@$probe/postgres?sslmode=disable"
		testenv_log "PostgreSQL: $INTAKE_TEST_DATABASE_URL"
		return 0
	fi
	local bin port dir as=()
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
	if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
		testenv_log "nothing answers on $probe and no PostgreSQL server binaries (apt-get install postgresql, or set INTAKE_TEST_DATABASE_URL)"
		return 1
	fi
	port=$(testenv_free_port) || { testenv_log "no free port for PostgreSQL"; return 1; }
	dir=$(mktemp -d "${TMPDIR:-/tmp}/docintake-test-pg.XXXXXX") || return 1
	if [ "$(id -u)" = 0 ]; then
		# PostgreSQL refuses to run as root.
		chmod 755 "$dir"
		chown postgres: "$dir" || { testenv_log "no postgres user to run the cluster as"; return 1; }
		as=(runuser -u postgres --)
	fi
	testenv_log "PostgreSQL: nothing answers on $probe; starting a private cluster on 127.0.0.1:$port ($dir)"
	"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
		{ testenv_log "initdb failed:"; cat "$dir/initdb.log" >&2; return 1; }
	"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
		-o "-p $port -h 127.0.0.1 -k $dir -c max_connections=300" start >/dev/null ||
		{ testenv_log "PostgreSQL did not start:"; cat "$dir/log" >&2; return 1; }
	TESTENV_PG_STOP="${as[*]} $bin/pg_ctl -D $dir/data -m fast stop >/dev/null 2>&1; rm -rf $dir"
	# shellcheck disable=SC2064 # expand now: the values are fixed
	trap "testenv_log 'stopping the private PostgreSQL'; $TESTENV_PG_STOP" EXIT
	export INTAKE_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	testenv_log "PostgreSQL: $INTAKE_TEST_DATABASE_URL"
}

testenv_packages && testenv_postgres
