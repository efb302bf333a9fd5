// Package jdbcbridge is a database/sql driver (name "jdbcbridge") that talks to Java databases,
// H2 and HSQLDB, through a small Java server speaking a binary protocol over TCP.
//
// # Server
//
// The server lives in java/tidemark/bridge and needs only a JDK 17 and the JDBC jars on the
// class path. Build it with build.sh (javac), or let [StartServer] compile it into the user
// cache directory and start it. Run by hand:
//
//	java -Duser.timezone=UTC -cp CLASSES:/usr/share/java/h2.jar:/usr/share/java/hsqldb.jar \
//	    tidemark.bridge.Server --port 0 [--bind 127.0.0.1] [--token T] [--allow-url-prefix P]... \
//	    [--max-request-bytes N] [--memory-budget-bytes N]
//
// It prints one line "LISTENING <port>" once ready. It listens on 127.0.0.1 by default, requires
// a token and TLS (--tls-cert, --tls-key) to bind any other address (and the driver refuses a
// non-loopback address without TLS), opens only allow-listed JDBC URL prefixes (by default
// in-memory databases only: jdbc:h2:mem: and jdbc:hsqldb:mem:; allow a file database by its
// directory, e.g. --allow-url-prefix jdbc:h2:file:/srv/tidemark/, and a path with a '..'
// segment is refused), refuses H2 URLs containing INIT= and lets HSQLDB call no Java method
// as an SQL routine (hsqldb.method_class_names). Sessions on in-memory databases run as the
// DSN's user without admin rights, owning a schema of its name (the bridge creates the
// database as an internal admin first), so SQL cannot run Java code or reach files (H2
// CREATE ALIAS, FILE_READ, ...). A prefix is a directory boundary; a client's URL and
// properties may carry only allow-listed settings; HSQLDB text tables are refused. File
// databases open only when they exist and only for users without admin rights there; they
// are created on the admin path (--create-database, [CreateFileDatabase]). --admin-sessions
// turns the session rules off. See docs/jdbc-bridge.md.
//
// # DSN
//
//	jdbcbridge://HOST:PORT?url=<url-escaped JDBC URL>&user=U&password=P&token=T
//
// Other optional query parameters:
//
//	fetchSize=256      rows per batch (first batch comes with the execute response)
//	cancelGrace=2s     how long the server may stay silent after a cancel before the socket closes
//	dialTimeout=10s    TCP connect + handshake timeout
//	tls=true           TLS, verifying the server against the system roots
//	tlsCA=FILE         TLS, verifying the server against the PEM certificates in FILE
//	tlsServerName=N    the name to verify (default: the DSN's host)
//	prop.NAME=VALUE    extra JDBC connection property NAME
//
// Example:
//
//	dsn := "jdbcbridge://127.0.0.1:4242?url=" + url.QueryEscape("jdbc:hsqldb:mem:x;hsqldb.tx=mvcc") + "&user=SA"
//	db, err := sql.Open("jdbcbridge", dsn)
//
// # Values
//
// Parameters use '?' placeholders and may be nil, bool, int64, float64, string, []byte,
// time.Time, [Decimal], or any 16-byte array type (UUIDs such as github.com/google/uuid.UUID);
// other types go through database/sql's default conversion. A time.Time bound to a DATE or TIME
// parameter uses its own wall clock; bound to a TIMESTAMP (without time zone) it is converted
// to UTC; bound to TIMESTAMP WITH TIME ZONE it keeps its instant and offset.
//
// Results: BOOLEAN → bool, integer types → int64, REAL/DOUBLE → float64, DECIMAL/NUMERIC →
// string (exact), character types and CLOB → string, binary types and BLOB → []byte, DATE,
// TIME, TIMESTAMP → time.Time in UTC (TIME on 0000-01-01), TIMESTAMP WITH TIME ZONE →
// time.Time with its offset, UUID → canonical string. Large objects are fetched in chunks
// transparently.
//
// TIME WITH TIME ZONE and INTERVAL values come back as strings.
//
// Errors from the database are [*Error] values carrying SQLSTATE and vendor code; refusals by
// the bridge use SQLSTATE 08004 (URL not allowed), 28000 (bad token), 08P01 (protocol),
// 22021 (text that is not valid UTF-8 in either direction: [ErrInvalidText]; never replaced by
// U+FFFD), 54000 (a request or result over the per-request limit: [ErrRequestTooLarge]) and
// HY001 (the JVM ran out of memory; the session's transaction was rolled back:
// [ErrOutOfMemory]). See docs/jdbc-bridge.md.
//
// # Memory
//
// The server bounds each request and response frame (--max-request-bytes, default 256 MiB)
// and the request frames all sessions hold at once (--memory-budget-bytes, default a quarter
// of the maximum heap). It opens HSQLDB in-memory databases with hsqldb.lob_file_scale=1
// unless told otherwise: at HSQLDB's default every CLOB takes a 32 KiB heap block.
//
// # Cancellation
//
// Canceling a context sends a CANCEL frame for the running request; the server cancels the JDBC
// statement from a separate thread. If the server then sends nothing for the grace period
// (cancelGrace; each byte of its answer restarts it) the socket is closed and the connection is discarded (IsValid reports false,
// ResetSession returns driver.ErrBadConn). Either way the call returns the context's error.
// Engine behaviour: H2 2.1 cancels running queries but not a wait for a row lock (that ends
// with H2's lock timeout, HYT00, after the connection has been dropped; in autocommit mode the
// statement commits if the lock is released first). HSQLDB in MVCC mode aborts lock waits
// (40502, vendor code -4872) but not CPU-bound queries, which are then dropped after the grace
// period. When a client disappears the server cancels its running statement, rolls back its
// open transaction and closes the JDBC connection.
package jdbcbridge
