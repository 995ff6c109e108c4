package cas

import (
	"fmt"
	"sync"
)

// ObjectSet is an in-memory object set, a Source and a Sink, safe for
// concurrent use: for tests, and for collecting new objects before they
// are packed.
type ObjectSet struct {
	mu      sync.RWMutex
	objects map[ID]Object
}

// NewObjectSet returns an empty ObjectSet.
func NewObjectSet() *ObjectSet { return &ObjectSet{objects: make(map[ID]Object)} }

// Put verifies obj as a PackWriter does (ID, size, kind rules) and keeps it.
func (m *ObjectSet) Put(obj Object) error {
	if err := obj.check(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[obj.ID]; !ok {
		m.objects[obj.ID] = obj
	}
	return nil
}

// Get returns the object id or ErrNotFound. The body is shared with the
// ObjectSet: callers must not modify it.
func (m *ObjectSet) Get(id ID) (Object, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.objects[id]
	if !ok {
		return Object{}, ErrNotFound
	}
	return o, nil
}

// Delete removes id (tests use it to make a closure incomplete).
func (m *ObjectSet) Delete(id ID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, id)
}

// Len returns the number of objects held.
func (m *ObjectSet) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.objects)
}

// IDs returns the IDs held, in no particular order.
func (m *ObjectSet) IDs() []ID {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := make([]ID, 0, len(m.objects))
	for id := range m.objects {
		ids = append(ids, id)
	}
	return ids
}
