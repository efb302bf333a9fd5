package plugin

import (
	"os"
	"strconv"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Serve runs d as a dialect plugin and never returns. It is the whole body of
// a plugin's main:
//
//	func main() { plugin.Serve(postgres.New()) }
//
// Run by hand (without the host's handshake cookie) it prints a short notice
// and exits with status 1.
//
// go-plugin does not stop a plugin whose host dies, so Serve adds a
// parent-death watchdog: the plugin exits as soon as its parent process goes
// away (see startParentWatchdog).
func Serve(d dialect.Dialect) {
	startParentWatchdog()
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: pluginSets(servedContractVersion(), d),
		GRPCServer:       goplugin.DefaultGRPCServer,
	})
	// goplugin.Serve returns once the host has asked it to stop.
	os.Exit(0)
}

// contractVersionOverride, when set at link time, makes Serve announce
// another contract version than ContractVersion. It exists only so the tests
// can build a plugin that speaks a foreign contract version:
//
//	go build -ldflags "-X github.com/tidemarkdb/tidemark/core/dialect/plugin.contractVersionOverride=2"
var contractVersionOverride string

// disableParentDeathSignal, when set to a non-empty value at link time, skips
// the Linux parent-death signal so the tests can prove the ppid poll alone.
var disableParentDeathSignal string

// servedContractVersion is the contract version this plugin binary speaks.
func servedContractVersion() int {
	if v, err := strconv.Atoi(contractVersionOverride); err == nil && v > 0 {
		return v
	}
	return dialect.ContractVersion
}

// watchdogInterval is how often the watchdog polls the parent pid.
const watchdogInterval = 150 * time.Millisecond

// startParentWatchdog makes the plugin exit when its host dies.
//
// The guarantee is the poll: the parent pid is recorded at start, and when
// os.Getppid changes (the host died and the plugin was reparented to init or
// to a subreaper) the process exits with status 0. On Linux the kernel's
// parent-death signal is armed as well, which is immediate; see
// setParentDeathSignal for why it is only a complement.
func startParentWatchdog() {
	ppid := os.Getppid()
	if disableParentDeathSignal == "" {
		setParentDeathSignal()
	}
	// The parent may have died before the watchdog was armed.
	if os.Getppid() != ppid {
		os.Exit(0)
	}
	go func() {
		t := time.NewTicker(watchdogInterval)
		defer t.Stop()
		for range t.C {
			if os.Getppid() != ppid {
				os.Exit(0)
			}
		}
	}()
}
