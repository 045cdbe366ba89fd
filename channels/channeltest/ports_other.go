//go:build !unix

package channeltest

import "net"

// holdPort returns a loopback port closed again at once: without a socket
// bound and not listening, another listener may take it meanwhile.
func holdPort() (addr string, release func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = l.Addr().String()
	return addr, func() {}, l.Close()
}
