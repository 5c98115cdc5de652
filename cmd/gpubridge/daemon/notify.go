package daemon

import (
	"net"
	"os"
)

// SdNotify sends state (e.g. "READY=1") to systemd when NOTIFY_SOCKET is
// set; it is a no-op otherwise.
func SdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}
