package harness

import (
	"os"
	"syscall"
)

// memDirBase is a memory file system the throw-away MariaDB and MySQL
// servers keep their data in when it has room: there an fsync costs
// nothing, and InnoDB syncs every table file it creates, so the suite's
// DDL per test (a fresh database and schema) ran about six times faster
// there than on disk. No test crashes these servers or the machine; the
// tests kill clients and server processes, and a killed process's writes
// are in the page cache either way.
const memDirBase = "/dev/shm"

// memDirMinFree is the room memDirBase must have: a MariaDB server's
// databases of a whole run (both MariaDB targets) take about 1.5 GB.
const memDirMinFree = 4 << 30

// tmpfsMagic is the file system type of a tmpfs (statfs(2)).
const tmpfsMagic = 0x01021994

// serverDataBase is where a throw-away server's directory goes:
// TIDEMARK_SERVER_DATA_DIR when set, else memDirBase when it is a tmpfs
// with memDirMinFree bytes free, else the temporary directory.
func serverDataBase() string {
	if d := os.Getenv("TIDEMARK_SERVER_DATA_DIR"); d != "" {
		return d
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(memDirBase, &st); err != nil {
		return os.TempDir()
	}
	if st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < memDirMinFree {
		return os.TempDir()
	}
	if syscall.Access(memDirBase, 2 /* W_OK */) != nil {
		return os.TempDir()
	}
	return memDirBase
}
