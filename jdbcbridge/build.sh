#!/bin/sh
# Compiles the JDBC bridge server. Usage: jdbcbridge/build.sh [OUTPUT_DIR]
# (default OUTPUT_DIR: jdbcbridge/build/classes). Needs only a JDK 17 javac; the H2 and HSQLDB
# jars are needed at run time:
#   java -Duser.timezone=UTC -cp OUTPUT_DIR:/usr/share/java/h2.jar:/usr/share/java/hsqldb.jar \
#       tidemark.bridge.Server --port 0
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/build/classes"}
mkdir -p "$out"
"${JAVAC:-javac}" -encoding UTF-8 -d "$out" "$here"/java/tidemark/bridge/*.java
echo "jdbcbridge classes in $out"
