package bpe

// Byte-pair encoding of a long chunk made of runs of one byte: a line of
// "=" or "-", a stretch of spaces, "AAAA..." in base64 of zeros, a word
// typed a million times over. Merging byte by byte costs a heap operation
// for every byte; here the parts are kept as runs of equal parts, and the
// merges that byte-pair encoding makes along a run one after another, the
// leftmost first, are made at once when nothing could come between them.
// A run of a million equal bytes then takes a few dozen steps.
//
// Why a run merges at once. Let a run hold k equal parts U and let the pair
// UU have the lowest rank R of all pairs, its leftmost occurrence being the
// run's first two parts (equal ranks merge leftmost first). tiktoken merges
// the first two parts, then looks for the lowest pair again. Pairs of rank
// R further along the run come next, and every pair outside the run has a
// rank above R or lies after the run, unless the merge made a new pair of
// rank below R. The merges along the run make only these new pairs: UU
// with the part before the run, UU with the next U, UU with the UU before
// it (UUUU), and, at the last merge, UU with the part after the run, which
// can only come after the run anyway. So when the first three have ranks
// above R, tiktoken merges the run's parts two by two, from the left, and
// leaves k/2 parts UU, and one U after them when k is odd. When one of
// them is below R, only the first pair merges, as tiktoken does, and the
// search goes on from there.

// runNode is a run of count equal parts of ulen bytes, back to back from
// the chunk's byte start. prev and next are the neighbouring runs' indexes
// (-1 at the ends); neighbouring runs never hold equal parts. version
// counts the changes to the run's pairs, to tell current candidates from
// stale ones.
type runNode struct {
	start, ulen, count int32
	prev, next         int32
	version            uint32
	dead               bool
}

// runCandidate is a pair that may merge: within run node (its first two
// parts), or across its end (its last part with the next run's first).
type runCandidate struct {
	rank    uint32
	offset  int32
	node    int32
	version uint32
	within  bool
}

// runMerge holds mergeRuns's state for one chunk.
type runMerge struct {
	v     *vocab
	chunk string
	nodes []runNode
	heap  []runCandidate
}

// longRuns reports whether chunk's bytes come in runs of 32 on average
// or more, which mergeRuns takes in far fewer steps than mergeLarge.
func longRuns(chunk string) bool {
	runs := 1
	for i := 1; i < len(chunk); i++ {
		if chunk[i] != chunk[i-1] {
			runs++
		}
	}
	return runs*32 <= len(chunk)
}

// mergeRuns returns the number of tokens chunk encodes to, as mergeLarge
// does.
func (v *vocab) mergeRuns(chunk string) int {
	var nodes []runNode
	for i := 0; i < len(chunk); {
		j := i + 1
		for j < len(chunk) && chunk[j] == chunk[i] {
			j++
		}
		nodes = append(nodes, runNode{start: int32(i), ulen: 1, count: int32(j - i)})
		i = j
	}
	return v.mergeParts(chunk, nodes)
}

// mergeParts merges chunk from the parts nodes hold (their start, ulen and
// count; neighbours' parts differ) and returns the number left.
func (v *vocab) mergeParts(chunk string, nodes []runNode) int {
	m := &runMerge{v: v, chunk: chunk, nodes: nodes}
	for i := range m.nodes {
		m.nodes[i].prev, m.nodes[i].next = int32(i-1), int32(i+1)
	}
	m.nodes[len(m.nodes)-1].next = -1
	for i := range m.nodes {
		m.refresh(int32(i))
	}
	for len(m.heap) > 0 {
		c := m.pop()
		x := &m.nodes[c.node]
		if x.dead || x.version != c.version {
			continue
		}
		if c.within {
			m.mergeWithin(c.node, c.rank)
		} else {
			m.mergeAcross(c.node)
		}
	}
	parts := 0
	for _, x := range m.nodes {
		if !x.dead {
			parts += int(x.count)
		}
	}
	return parts
}

// span returns the bytes of n parts of run x from its first.
func (m *runMerge) span(x int32, n int32) string {
	r := &m.nodes[x]
	return m.chunk[r.start : r.start+n*r.ulen]
}

// lastStart is the offset of run x's last part.
func (m *runMerge) lastStart(x int32) int32 {
	r := &m.nodes[x]
	return r.start + (r.count-1)*r.ulen
}

// mergeWithin merges the parts of run x, whose pair has rank r: all of
// them two by two when nothing can come between (see the top of the
// file), else its first two.
func (m *runMerge) mergeWithin(x int32, r uint32) {
	k := m.nodes[x].count
	all := k >= 3 && m.v.rank(m.span(x, 3)) > r
	if all && k >= 4 {
		all = m.v.rank(m.span(x, 4)) > r
	}
	if p := m.nodes[x].prev; all && p >= 0 {
		all = m.v.rank(m.chunk[m.lastStart(p):m.nodes[x].start+2*m.nodes[x].ulen]) > r
	}
	u := m.nodes[x].ulen
	switch {
	case all:
		m.nodes[x].ulen, m.nodes[x].count = 2*u, k/2
		if k%2 == 1 {
			m.insertAfter(x, m.nodes[x].start+2*u*(k/2), u, 1)
		}
	case k == 2:
		m.nodes[x].ulen, m.nodes[x].count = 2*u, 1
	default:
		m.nodes[x].ulen, m.nodes[x].count = 2*u, 1
		m.insertAfter(x, m.nodes[x].start+2*u, u, k-2)
	}
	m.settle(x)
}

// mergeAcross merges the last part of run x with the first of the next.
func (m *runMerge) mergeAcross(x int32) {
	y := m.nodes[x].next
	at := m.lastStart(x)
	w := m.insertAfter(x, at, m.nodes[x].ulen+m.nodes[y].ulen, 1)
	m.nodes[x].count--
	m.nodes[y].count--
	m.nodes[y].start += m.nodes[y].ulen
	if m.nodes[y].count == 0 {
		m.unlink(y)
	}
	if m.nodes[x].count == 0 {
		m.unlink(x)
	}
	m.settle(w)
}

// settle joins run x with its neighbours where their parts are equal, and
// renews the candidates of x's run and of the runs on each side.
func (m *runMerge) settle(x int32) {
	if n := m.nodes[x].next; n >= 0 && m.equal(x, n) {
		m.nodes[x].count += m.nodes[n].count
		m.unlink(n)
	}
	if p := m.nodes[x].prev; p >= 0 && m.equal(p, x) {
		m.nodes[p].count += m.nodes[x].count
		m.unlink(x)
		x = p
	}
	m.refresh(x)
	if p := m.nodes[x].prev; p >= 0 {
		m.refresh(p)
	}
	if n := m.nodes[x].next; n >= 0 {
		m.refresh(n)
	}
}

// equal reports whether runs a and b hold equal parts.
func (m *runMerge) equal(a, b int32) bool {
	ra, rb := &m.nodes[a], &m.nodes[b]
	return ra.ulen == rb.ulen && m.chunk[ra.start:ra.start+ra.ulen] == m.chunk[rb.start:rb.start+rb.ulen]
}

// insertAfter adds a run of count parts of ulen bytes from start after run
// x and returns it.
func (m *runMerge) insertAfter(x, start, ulen, count int32) int32 {
	n := int32(len(m.nodes))
	next := m.nodes[x].next
	m.nodes = append(m.nodes, runNode{start: start, ulen: ulen, count: count, prev: x, next: next})
	m.nodes[x].next = n
	if next >= 0 {
		m.nodes[next].prev = n
	}
	return n
}

// unlink takes run x out of the list.
func (m *runMerge) unlink(x int32) {
	r := &m.nodes[x]
	if r.prev >= 0 {
		m.nodes[r.prev].next = r.next
	}
	if r.next >= 0 {
		m.nodes[r.next].prev = r.prev
	}
	r.dead = true
	r.version++
}

// refresh makes the candidates of run x current: the pair within it, when
// it has two parts or more, and the pair across its end.
func (m *runMerge) refresh(x int32) {
	r := &m.nodes[x]
	r.version++
	if r.count >= 2 {
		if rank := m.v.rank(m.span(x, 2)); rank != noRank {
			m.push(runCandidate{rank, r.start, x, r.version, true})
		}
	}
	if r.next >= 0 {
		at := m.lastStart(x)
		y := &m.nodes[r.next]
		if rank := m.v.rank(m.chunk[at : y.start+y.ulen]); rank != noRank {
			m.push(runCandidate{rank, at, x, r.version, false})
		}
	}
}

// The candidates are a binary min-heap by rank, then offset, as mergeHeap
// is.

func (m *runMerge) less(a, b int) bool {
	h := m.heap
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (m *runMerge) push(c runCandidate) {
	m.heap = append(m.heap, c)
	for i := len(m.heap) - 1; i > 0; {
		parent := (i - 1) / 2
		if !m.less(i, parent) {
			break
		}
		m.heap[i], m.heap[parent] = m.heap[parent], m.heap[i]
		i = parent
	}
}

func (m *runMerge) pop() runCandidate {
	h := m.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	m.heap = h[:last]
	for i := 0; ; {
		child := 2*i + 1
		if child >= last {
			break
		}
		if right := child + 1; right < last && m.less(right, child) {
			child = right
		}
		if !m.less(child, i) {
			break
		}
		m.heap[i], m.heap[child] = m.heap[child], m.heap[i]
		i = child
	}
	return top
}
