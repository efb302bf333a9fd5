#!/usr/bin/env bash
# setup-debian.sh — install the database servers and Java pieces the
# conformance suite uses (PostgreSQL, MariaDB, a headless JDK, H2, HSQLDB).
#
# Idempotent, for Debian 12 as root. Packages already present are not touched
# and, when nothing is missing, apt is not run at all. It does not start any
# service: conformance/harness starts its own throw-away servers.
#
# Usage: sudo scripts/setup-debian.sh
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "setup-debian.sh: must run as root" >&2
	exit 1
fi

# package -> a command or file that shows it is usable
declare -A want=(
	[postgresql]="initdb:/usr/lib/postgresql/*/bin/initdb"
	[mariadb-server]="cmd:mariadbd"
	[default-jdk-headless]="cmd:javac"
	[libh2-java]="file:/usr/share/java/h2.jar"
	[libhsqldb-java]="file:/usr/share/java/hsqldb.jar"
)

installed() { # package
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

usable() { # check
	local kind=${1%%:*} what=${1#*:}
	case $kind in
	cmd) command -v "$what" >/dev/null 2>&1 || [ -x "/usr/sbin/$what" ] ;;
	file) [ -e "$what" ] ;;
	initdb) compgen -G "$what" >/dev/null ;;
	esac
}

missing=()
for pkg in postgresql mariadb-server default-jdk-headless libh2-java libhsqldb-java; do
	if installed "$pkg" && usable "${want[$pkg]}"; then
		echo "present: $pkg"
	else
		missing+=("$pkg")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-debian.sh: everything present, nothing installed"
	exit 0
fi

echo "setup-debian.sh: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Keep package scripts from starting the services: the harness starts its
# own servers. policy-rc.d is honoured by invoke-rc.d; only remove it if we
# created it.
policy=/usr/sbin/policy-rc.d
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
