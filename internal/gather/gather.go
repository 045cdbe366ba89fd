package gather

// Ready appends to batch what ch holds, without waiting, until batch has n
// items or ch is empty or closed, and returns it.
func Ready[T any](ch <-chan T, batch []T, n int) []T {
	for len(batch) < n {
		select {
		case v, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, v)
		default:
			return batch
		}
	}
	return batch
}
