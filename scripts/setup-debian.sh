#!/usr/bin/env bash
# setup-debian.sh — install the database servers and Java pieces the
# conformance suite uses (PostgreSQL, MariaDB, a headless JDK, H2, HSQLDB,
# Firebird 3 for examples/firebird, galera-4 and rsync for the Galera cluster
# of conformance/galera_test.go, chromium for the browser test of the
# operator console, cmd/tidemark's serve_browser_test.go).
#
# Idempotent, for Debian 12. Packages already present are not touched and,
# when nothing is missing, apt is not run at all. It does not start any
# service: conformance/harness starts its own throw-away servers.
#
# Usage:
#   scripts/setup-debian.sh [--if-needed] [PACKAGE…]
#
# With no PACKAGE, every package the suite uses. With --if-needed (what
# `make test` and `make demo` run) it never fails the build: when packages
# are missing and it is not root, or this is not a Debian system, it prints
# one line saying what is missing and the exact command to run, and exits 0,
# so the tests skip those engines with their reasons.
set -euo pipefail

# package -> a command or file that shows it is usable
declare -A want=(
	[postgresql]="initdb:/usr/lib/postgresql/*/bin/initdb"
	[mariadb-server]="cmd:mariadbd"
	[default-jdk-headless]="cmd:javac"
	[libh2-java]="file:/usr/share/java/h2.jar"
	[libhsqldb-java]="file:/usr/share/java/hsqldb.jar"
	[firebird3.0-server]="glob:/usr/sbin/firebird /usr/bin/isql-fb /usr/share/firebird/*/security.sql"
	[galera-4]="glob:/usr/lib/galera/libgalera_smm.so"
	[rsync]="cmd:rsync"
	[chromium]="cmd:chromium"
)
all=(postgresql mariadb-server default-jdk-headless libh2-java libhsqldb-java firebird3.0-server galera-4 rsync chromium)

if_needed=0
if [ "${1:-}" = "--if-needed" ]; then
	if_needed=1
	shift
fi
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=("${all[@]}")
fi

installed() { # package
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

usable() { # check
	local kind=${1%%:*} what=${1#*:}
	case $kind in
	cmd) command -v "$what" >/dev/null 2>&1 || [ -x "/usr/sbin/$what" ] ;;
	file) [ -e "$what" ] ;;
	initdb) compgen -G "$what" >/dev/null ;;
	glob) # every space-separated pattern matches something
		local g
		for g in $what; do compgen -G "$g" >/dev/null || return 1; done ;;
	*) return 1 ;;
	esac
}

missing=()
for pkg in "${pkgs[@]}"; do
	if [ -z "${want[$pkg]:-}" ]; then
		echo "setup-debian.sh: unknown package $pkg (known: ${all[*]})" >&2
		exit 2
	fi
	if installed "$pkg" && usable "${want[$pkg]}"; then
		[ "$if_needed" = 1 ] || echo "present: $pkg"
	else
		missing+=("$pkg")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	[ "$if_needed" = 1 ] || echo "setup-debian.sh: everything present, nothing installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	why="not root"
	command -v apt-get >/dev/null 2>&1 || why="no apt-get (not Debian)"
	msg="setup-debian.sh: missing ${missing[*]} ($why); to install them run: sudo scripts/setup-debian.sh ${missing[*]}"
	if [ "$if_needed" = 1 ]; then
		echo "$msg; the engines they serve are skipped with their reasons"
		exit 0
	fi
	echo "$msg" >&2
	exit 1
fi

echo "setup-debian.sh: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Keep package scripts from starting the services: the harness starts its
# own servers. policy-rc.d is honoured by invoke-rc.d; only remove it if we
# created it.
policy=${POLICY_RC_D:-/usr/sbin/policy-rc.d} # overridable for the script's own test
made_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	made_policy=1
fi
cleanup() { if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi; }
trap cleanup EXIT

apt-get update -q
apt-get install -y -q "${missing[@]}"

for pkg in "${missing[@]}"; do
	if installed "$pkg"; then
		echo "installed: $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
	else
		echo "setup-debian.sh: $pkg did not install" >&2
		exit 1
	fi
done
