package bpe

// Byte-pair encoding of one chunk: start from its bytes, and repeatedly merge
// the adjacent pair of parts that forms the token of lowest rank, the
// leftmost such pair on a tie, until no adjacent pair forms a token. The
// number of parts left is the number of tokens. This is tiktoken's
// algorithm; only the count is kept, not the tokens.

// smallChunk is the longest chunk merged by scanning for the lowest rank on
// every step, in arrays on the stack; longer chunks use a heap, so that a
// long chunk costs O(n log n), not O(n²), or, when its bytes come in long
// runs, the run merge (mergeRuns).
const smallChunk = 64

// scratch holds the buffers of the heap merge, kept across the chunks of
// one count so that they are allocated once.
type scratch struct {
	nodes []mergeNode
	heap  mergeHeap
}

// encodedLen returns the number of tokens chunk encodes to.
func (v *vocab) encodedLen(chunk string, sc *scratch) int {
	if len(chunk) == 1 || v.rank(chunk) != noRank {
		return 1
	}
	if len(chunk) <= smallChunk {
		return v.mergeSmall(chunk)
	}
	if longRuns(chunk) {
		return v.mergeRuns(chunk)
	}
	return v.mergeLarge(chunk, sc)
}

// mergeSmall merges a chunk of at most smallChunk bytes. Part k starts at
// start[k] (start[parts] is the chunk's end) and rank[k] is the rank of
// parts k and k+1 merged.
func (v *vocab) mergeSmall(chunk string) int {
	var start [smallChunk + 1]uint8
	var rank [smallChunk]uint32
	parts := len(chunk)
	for k := range parts {
		start[k] = uint8(k)
	}
	start[parts] = uint8(parts)
	for k := range parts - 1 {
		rank[k] = v.pair(chunk[k], chunk[k+1])
	}
	rank[parts-1] = noRank

	for parts > 1 {
		best, k := uint32(noRank), -1
		for i, r := range rank[:parts-1] {
			if r < best {
				best, k = r, i
			}
		}
		if k < 0 {
			break
		}
		// Part k absorbs part k+1.
		copy(start[k+1:parts], start[k+2:parts+1])
		copy(rank[k+1:parts-1], rank[k+2:parts])
		parts--
		if k+1 < parts {
			rank[k] = v.rank(chunk[start[k]:start[k+2]])
		} else {
			rank[k] = noRank
		}
		if k > 0 {
			rank[k-1] = v.rank(chunk[start[k-1]:start[k+1]])
		}
	}
	return parts
}

// mergeNode is a part of a chunk in mergeLarge's list of parts, indexed by
// the offset where the part starts. rank is the rank of the part merged
// with the next one; a part merged away has prev == -2.
type mergeNode struct {
	prev, next int32
	rank       uint32
}

// mergeLarge merges a chunk of any length, in O(n log n): a heap yields the
// candidate pair of lowest rank and leftmost offset; a candidate whose
// rank no longer matches its part's is stale and skipped.
func (v *vocab) mergeLarge(chunk string, sc *scratch) int {
	n := int32(len(chunk))
	if cap(sc.nodes) < int(n) {
		sc.nodes = make([]mergeNode, n)
	}
	nodes := sc.nodes[:n]
	// Each merge pops a candidate and pushes two at most, so the heap
	// holds 2n at most: room for them all at once, not grown by doubling.
	if cap(sc.heap) < 2*int(n) {
		sc.heap = make(mergeHeap, 0, 2*n)
	}
	h := sc.heap[:0]
	for i := range n {
		nodes[i] = mergeNode{prev: i - 1, next: i + 1, rank: noRank}
		if i+1 < n {
			if r := v.pair(chunk[i], chunk[i+1]); r != noRank {
				nodes[i].rank = r
				h = append(h, candidate{r, i})
			}
		}
	}
	nodes[n-1].next = -1
	h.init()

	// rankAt is the rank of part i merged with its successor.
	rankAt := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		end := n
		if k := nodes[j].next; k >= 0 {
			end = k
		}
		return v.rank(chunk[i:end])
	}
	parts := int(n)
	for len(h) > 0 {
		c := h.pop()
		i := c.offset
		if nodes[i].prev == -2 || nodes[i].rank != c.rank {
			continue
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		nodes[j].prev = -2
		parts--
		if nodes[i].rank = rankAt(i); nodes[i].rank != noRank {
			h.push(candidate{nodes[i].rank, i})
		}
		if p := nodes[i].prev; p >= 0 {
			if nodes[p].rank = rankAt(p); nodes[p].rank != noRank {
				h.push(candidate{nodes[p].rank, p})
			}
		}
	}
	sc.heap = h
	return parts
}

// candidate is a pair that may merge: the part at offset with its next.
type candidate struct {
	rank   uint32
	offset int32
}

// mergeHeap is a binary min-heap of candidates by rank, then offset, so
// that the leftmost of equal ranks merges first. It is typed rather than a
// container/heap so that pushing does not allocate an interface.
type mergeHeap []candidate

func (h mergeHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(c candidate) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *mergeHeap) pop() candidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h mergeHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h mergeHeap) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if right := child + 1; right < len(h) && h.less(right, child) {
			child = right
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}
