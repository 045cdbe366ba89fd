//go:build unix

package channeltest

import (
	"net"
	"strconv"
	"syscall"
)

// holdPort binds a socket to a free loopback port without listening on it.
func holdPort() (addr string, release func(), err error) {
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return "", nil, err
	}
	release = func() { _ = syscall.Close(fd) }
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return "", nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		release()
		return "", nil, err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)), release, nil
}
