// Package scratch gives a test binary a folder in memory for its temporary
// files, where the machine has a memory file system with room for them.
//
// A package whose tests each start services make tens of thousands of files
// and folders (databases, JetStream stores, warehouses) and delete them
// again. On a disk each costs the kernel a search for a free inode and a
// discard; on tmpfs it costs nothing measurable. Crashes stay real: the
// processes the tests kill lose nothing a disk would have kept, since
// SIGKILL leaves the page cache as it was.
package scratch
