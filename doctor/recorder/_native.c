/* The recorder's runs kept in C: a Runs object notes every Predictor.run() and the inputs each
 * thread copied in (Tensor.copy_from_cpu) for the writer to fold (live.py's Process.fold), as
 * python_runs.py's PythonRuns does in Python. A Paddle run() leaves the caches cold; what the
 * recorder does next to it costs by the cache lines and pages it touches, so a run touches few:
 *
 *   - the predictor's LivePredictor, found in an open-addressing table keyed by the predictor's
 *     address (Runs.remember, Runs.forget);
 *   - the inputs its thread copied in, kept by the thread in a ThreadInputs object (owned by the
 *     thread state's dictionary, so it goes with the thread; a C thread-local points at it), whose
 *     keys ((shape, dtype) tuples) and inputs tuple are reused while the shapes stay the same;
 *     with none copied in, the inputs its predictor's last run read from its input handles, kept
 *     in its slot of the table while no input handle changed (a count every copy_from_cpu,
 *     reshape, share_external_data and run(inputs) adds to), else read from them again;
 *   - the thread's number (given as its ThreadInputs is made) and, in the predictor's slot, the thread
 *     and the count of input handle changes of its last run(): where this thread copied inputs in
 *     since its own last run and another thread's run() of the predictor began since the first of
 *     those copies, the run is noted as crossed (its inputs may have been taken or overwritten);
 *   - while it runs, a node on the C stack linked into the Runs' list of runs in flight;
 *   - when it has ended, one struct appended to an array, taken by Runs.take() at the next fold.
 *
 * A numpy array's shape is compared with the last one copied at its place without asking numpy
 * for a new tuple: its dimensions are read from the array's head (numpy's public ABI: nd,
 * dimensions and descr, the dtype), which is checked once against the shape and dtype numpy says.
 *
 * The limits Python holds (live.py: how many inputs a thread keeps between two runs, how many runs
 * wait before the writer is woken, and before one is not counted) are given to the Runs object as
 * it is made; the wrappers of a Runs read them there.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAX_REUSED 8   /* the places whose last key a thread keeps to reuse */
#define MAX_DIMS 8     /* the most dimensions of a shape compared in place */

static unsigned long long handles_changed; /* copies into, and other changes of, any input handle */
static unsigned long threads_numbered;     /* the number of the last thread given one */

#define COPIED 1  /* a run's inputs were copied in on its thread (python_runs.COPIED) */
#define CROSSED 2 /* and another thread's run() of its predictor began after the first copy (python_runs.CROSSED) */

static PyObject *pending_key, *str_shape, *str_dtype, *str_inputs, *str_data, *str_inputs_of, *str_live_of,
    *str_failed;

static long long
now_ns(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyTime_t now;
    PyTime_PerfCounterRaw(&now); /* sets no error: 0 on one */
    return (long long)now;
#else
    return (long long)_PyTime_GetPerfCounter();
#endif
}

/* The argument at `index` (the predictor or tensor is 0) or named `name`, or NULL. */
static PyObject *
argument(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t index, PyObject *name)
{
    if (nargs > index) {
        return args[index];
    }
    if (kwnames != NULL) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *given = PyTuple_GET_ITEM(kwnames, i);
            if (given == name || PyUnicode_Compare(given, name) == 0) { /* keywords are str: it cannot fail */
                return args[nargs + i];
            }
        }
    }
    return NULL;
}

/* process.failed(f"{where}: {error!r}"[:200]) for the Exception raised now, which is cleared: 0. Another
 * BaseException (KeyboardInterrupt, SystemExit) stays raised, for the service, as Python's `except
 * Exception` would leave it: -1. */
static int
note_failure(PyObject *process, const char *where)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyObject *said = value != NULL ? PyObject_Repr(value) : NULL;
    PyObject *message = said != NULL ? PyUnicode_FromFormat("%s: %U", where, said) : NULL;
    PyObject *bounded = message != NULL ? PyUnicode_Substring(message, 0, 200) : NULL;
    PyObject *done = bounded != NULL ? PyObject_CallMethodOneArg(process, str_failed, bounded) : NULL;
    Py_XDECREF(done);
    Py_XDECREF(bounded);
    Py_XDECREF(message);
    Py_XDECREF(said);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    PyErr_Clear();
    return 0;
}

/* The error raised now cleared when it is an Exception (0); another BaseException stays raised (-1). */
static int
clear_exception(void)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    PyErr_Clear();
    return 0;
}

/* ---- the inputs a thread copied in ---- */

typedef struct {
    PyObject_HEAD
    Py_ssize_t count;              /* keys copied in since the thread's last run() */
    Py_ssize_t capacity;           /* of keys: the most max_pending of the Runs it copied for */
    PyObject **keys;               /* owned, or NULL before the first copy */
    PyObject *last;                /* the tuple of keys handed to the last run(), owned, or NULL */
    unsigned long number;          /* the thread's: 1 for the first thread to run, copy or ask for an output */
    unsigned long long copied_at;  /* handles_changed after the first of the keys was copied in */
    struct {
        PyObject *key;             /* owned, or NULL */
        int nd;                    /* -1: not an ndarray's */
        Py_ssize_t dims[MAX_DIMS];
    } reused[MAX_REUSED];
} ThreadInputs;

static _Thread_local ThreadInputs *this_thread;

static void
thread_inputs_forget(ThreadInputs *self)
{
    for (Py_ssize_t i = 0; i < self->count; i++) {
        Py_CLEAR(self->keys[i]);
    }
    self->count = 0;
}

static void
thread_inputs_dealloc(ThreadInputs *self)
{
    if (this_thread == self) {
        this_thread = NULL;
    }
    thread_inputs_forget(self);
    PyMem_Free(self->keys);
    Py_CLEAR(self->last);
    for (int i = 0; i < MAX_REUSED; i++) {
        Py_CLEAR(self->reused[i].key);
    }
    PyObject_Free(self);
}

static PyTypeObject ThreadInputsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "paddle_doctor.record._native.ThreadInputs",
    .tp_basicsize = sizeof(ThreadInputs),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)thread_inputs_dealloc,
};

/* This thread's inputs, made and handed to its thread state's dictionary the first time; NULL with
 * an error set when they cannot be. */
static ThreadInputs *
thread_inputs(void)
{
    if (this_thread != NULL) {
        return this_thread;
    }
    PyObject *state = PyThreadState_GetDict();
    if (state == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "no thread state");
        return NULL;
    }
    ThreadInputs *made = PyObject_New(ThreadInputs, &ThreadInputsType);
    if (made == NULL) {
        return NULL;
    }
    made->count = made->capacity = 0;
    made->keys = NULL;
    made->last = NULL;
    made->number = ++threads_numbered;
    made->copied_at = 0;
    for (int i = 0; i < MAX_REUSED; i++) {
        made->reused[i].key = NULL;
        made->reused[i].nd = -1;
    }
    int failed = PyDict_SetItem(state, pending_key, (PyObject *)made);
    Py_DECREF(made); /* the thread state's dictionary holds it: it goes with the thread */
    if (failed) {
        return NULL;
    }
    this_thread = made;
    return made;
}

/* The inputs copied in on this thread since its last run() as a tuple of keys (a new reference; the
 * last run's tuple when they are the same keys), or NULL when none were (an error set if it failed). */
static PyObject *
take_inputs(void)
{
    ThreadInputs *inputs = this_thread;
    if (inputs == NULL || inputs->count == 0) {
        return NULL;
    }
    Py_ssize_t count = inputs->count;
    PyObject *last = inputs->last;
    int same = last != NULL && PyTuple_GET_SIZE(last) == count;
    for (Py_ssize_t i = 0; same && i < count; i++) {
        same = PyTuple_GET_ITEM(last, i) == inputs->keys[i];
    }
    if (same) {
        PyObject *taken = Py_NewRef(last);
        thread_inputs_forget(inputs);
        return taken;
    }
    PyObject *made = PyTuple_New(count); /* may collect garbage, whose finalizers may copy and run here */
    if (made == NULL) {
        thread_inputs_forget(inputs);
        return NULL;
    }
    if (inputs->count != count) {
        Py_DECREF(made);
        return take_inputs(); /* what is pending now */
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyTuple_SET_ITEM(made, i, inputs->keys[i]);
        inputs->keys[i] = NULL;
    }
    inputs->count = 0;
    PyObject *taken = Py_NewRef(made);
    Py_XSETREF(inputs->last, made);
    return taken;
}

/* numpy's ndarray head, as its public ABI lays it out. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
} ArrayHead;

static PyTypeObject *ndarray;  /* numpy.ndarray, once its head was checked against what numpy says */
static int ndarray_checked;

/* Whether `data`'s head says the shape and dtype in `key` (an ndarray's, numpy having said them). */
static int
head_agrees(PyObject *data, PyObject *key)
{
    ArrayHead *head = (ArrayHead *)data;
    PyObject *shape = PyTuple_GET_ITEM(key, 0), *dtype = PyTuple_GET_ITEM(key, 1);
    if (!PyTuple_Check(shape) || head->descr != dtype || head->nd != PyTuple_GET_SIZE(shape)) {
        return 0;
    }
    for (int i = 0; i < head->nd; i++) {
        Py_ssize_t size = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (size != head->dimensions[i]) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* (data.shape, data.dtype), numpy asked: a new reference, or NULL with an error set. */
static PyObject *
asked_key(PyObject *data)
{
    PyObject *shape = PyObject_GetAttr(data, str_shape);
    PyObject *dtype = shape != NULL ? PyObject_GetAttr(data, str_dtype) : NULL;
    PyObject *key = dtype != NULL ? PyTuple_Pack(2, shape, dtype) : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    return key;
}

/* Whether `type` may be numpy's ndarray: named so, built in C (not a class of Python's), and with a
 * head at least as large as the one read; its head is then checked once against what numpy says. */
static int
may_be_ndarray(PyTypeObject *type)
{
    return !(type->tp_flags & Py_TPFLAGS_HEAPTYPE) && type->tp_basicsize >= (Py_ssize_t)sizeof(ArrayHead) &&
           strcmp(type->tp_name, "numpy.ndarray") == 0;
}

/* The key noted last at `place` when `data`, an ndarray, has its shape and dtype (a new reference), or NULL. */
static PyObject *
reused_key(ThreadInputs *inputs, Py_ssize_t place, PyObject *data)
{
    if (Py_TYPE(data) != ndarray || place >= MAX_REUSED || inputs->reused[place].key == NULL) {
        return NULL;
    }
    ArrayHead *head = (ArrayHead *)data;
    int nd = inputs->reused[place].nd;
    if (head->nd != nd || head->descr != PyTuple_GET_ITEM(inputs->reused[place].key, 1) ||
        (nd > 0 && memcmp(head->dimensions, inputs->reused[place].dims, (size_t)nd * sizeof(Py_ssize_t)) != 0)) {
        return NULL;
    }
    return Py_NewRef(inputs->reused[place].key);
}

/* Keeps `key`, numpy's word for the ndarray `data`, to be reused at `place`. */
static void
keep_for_reuse(ThreadInputs *inputs, Py_ssize_t place, PyObject *data, PyObject *key)
{
    ArrayHead *head = (ArrayHead *)data;
    if (place >= MAX_REUSED || head->nd > MAX_DIMS) {
        return;
    }
    Py_XSETREF(inputs->reused[place].key, Py_NewRef(key));
    inputs->reused[place].nd = head->nd;
    if (head->nd > 0) {
        memcpy(inputs->reused[place].dims, head->dimensions, (size_t)head->nd * sizeof(Py_ssize_t));
    }
}

/* Room in the thread's keys for `most` of them (a new thread's first copy, or a copy for a Runs
 * that keeps more than those before): 0, or -1 with an error set. */
static int
make_room(ThreadInputs *inputs, Py_ssize_t most)
{
    if (inputs->capacity >= most) {
        return 0;
    }
    PyObject **keys = PyMem_Realloc(inputs->keys, (size_t)most * sizeof(PyObject *));
    if (keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    inputs->keys = keys;
    inputs->capacity = most;
    return 0;
}

/* Notes (data.shape, data.dtype) for this thread's next run(), keeping at most `most` of them
 * between two runs (the last); data without them is not noted: 0. -1 when asking them raised a
 * BaseException that is not an Exception (it stays raised). The key is made first (asking numpy may
 * run Python code, and that code may copy and run on this thread), then put at the end of what is
 * pending then. */
static int
note_copy(PyObject *data, Py_ssize_t most)
{
    ThreadInputs *inputs = thread_inputs();
    if (inputs == NULL) {
        return clear_exception();
    }
    Py_ssize_t place = inputs->count < most ? inputs->count : 0;
    PyObject *key = reused_key(inputs, place, data);
    if (key == NULL) {
        key = asked_key(data);
        if (key == NULL) {
            return clear_exception(); /* a list of strings has neither */
        }
        if (!ndarray_checked && may_be_ndarray(Py_TYPE(data))) {
            ndarray_checked = 1;
            if (head_agrees(data, key)) {
                ndarray = Py_TYPE(data);
            }
        }
        if (Py_TYPE(data) == ndarray) {
            keep_for_reuse(inputs, place, data, key);
        }
    }
    if (inputs->count >= most) {
        thread_inputs_forget(inputs);
    }
    if (make_room(inputs, most) < 0) {
        Py_DECREF(key);
        return clear_exception();
    }
    if (inputs->count == 0) {
        inputs->copied_at = handles_changed;
    }
    inputs->keys[inputs->count++] = key;
    return 0;
}

/* ---- the runs ---- */

typedef struct Running {
    struct Running *previous, *next;
    PyObject *live; /* borrowed from the run's own reference */
    long long start;
    unsigned long forks; /* the Runs' when it began */
} Running;

typedef struct {
    PyObject *live, *inputs; /* owned */
    long long start, end;
    unsigned long thread; /* its number */
    int copied;           /* 0, COPIED or CROSSED */
} Ended;

typedef struct {
    void *predictor; /* NULL: empty; TOMBSTONE: forgotten */
    PyObject *live;  /* owned */
    PyObject *read;  /* owned, or NULL: the inputs a run of this predictor last read from its handles */
    unsigned long long read_at; /* handles_changed then */
    unsigned long last_thread;  /* the thread of its last run() begun, 0 before one */
    unsigned long long last_run_at; /* handles_changed as it began */
} Slot;

static char tombstone;
#define TOMBSTONE ((void *)&tombstone)

typedef struct {
    PyObject_HEAD
    PyObject *process, *wake, *no_inputs;
    Slot *slots;
    Py_ssize_t capacity, used; /* used: the slots not empty, tombstones included */
    Running *running;
    Ended *ended;
    Py_ssize_t ended_count, ended_capacity;
    Py_ssize_t fold_at, max_ended, max_pending, not_counted;
    unsigned long forks; /* Runs.forked() calls: a run that began before one was the parent's */
} Runs;

static Py_ssize_t
slot_of(Slot *slots, Py_ssize_t capacity, void *predictor)
{
    uint64_t mixed = (uint64_t)(uintptr_t)predictor * 0x9E3779B97F4A7C15ull; /* the high bits folded in */
    size_t mask = (size_t)capacity - 1, at = (size_t)(mixed ^ (mixed >> 32)) & mask;
    while (slots[at].predictor != NULL && slots[at].predictor != predictor) {
        at = (at + 1) & mask;
    }
    return (Py_ssize_t)at;
}

/* The predictor's slot, or NULL where it has none. */
static Slot *
found(Runs *self, void *predictor)
{
    if (self->slots == NULL) {
        return NULL;
    }
    Slot *slot = &self->slots[slot_of(self->slots, self->capacity, predictor)];
    return slot->live != NULL ? slot : NULL;
}

static PyObject *
known(Runs *self, void *predictor)
{
    Slot *slot = found(self, predictor);
    return slot != NULL ? slot->live : NULL;
}

/* What the last run of `predictor` (as `live`'s) read from its input handles, when no input handle
 * has changed since (a new reference), or NULL. */
static PyObject *
read_before(Runs *self, void *predictor, PyObject *live)
{
    Slot *slot = found(self, predictor);
    if (slot == NULL || slot->live != live || slot->read == NULL || slot->read_at != handles_changed) {
        return NULL;
    }
    return Py_NewRef(slot->read);
}

/* Keeps what a run of `predictor` read from its input handles when handles_changed was `at`. The slot
 * is looked up again: reading them ran Python code, which may have grown the table. */
static void
keep_read(Runs *self, void *predictor, PyObject *live, PyObject *read, unsigned long long at)
{
    Slot *slot = found(self, predictor);
    if (slot != NULL && slot->live == live) {
        Py_XSETREF(slot->read, Py_NewRef(read));
        slot->read_at = at;
    }
}

static int
regrow(Runs *self)
{
    Py_ssize_t capacity = self->capacity ? self->capacity : 16;
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < self->capacity; i++) {
        kept += self->slots[i].live != NULL;
    }
    while (kept * 2 >= capacity) {
        capacity *= 2;
    }
    Slot *slots = PyMem_Calloc((size_t)capacity, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->capacity; i++) {
        if (self->slots[i].live != NULL) {
            slots[slot_of(slots, capacity, self->slots[i].predictor)] = self->slots[i];
        }
    }
    PyMem_Free(self->slots);
    self->slots = slots;
    self->capacity = capacity;
    self->used = kept;
    return 0;
}

static PyObject *
runs_remember(Runs *self, PyObject *args)
{
    PyObject *predictor, *live;
    if (!PyArg_ParseTuple(args, "OO:remember", &predictor, &live)) {
        return NULL;
    }
    if ((self->used + 1) * 2 > self->capacity && regrow(self) < 0) {
        return NULL;
    }
    Slot *slot = &self->slots[slot_of(self->slots, self->capacity, predictor)];
    if (slot->predictor == NULL) {
        self->used++;
    }
    Py_INCREF(live);
    slot->predictor = predictor;
    slot->last_thread = 0;
    slot->last_run_at = 0;
    Py_CLEAR(slot->read);
    Py_XSETREF(slot->live, live);
    Py_RETURN_NONE;
}

static PyObject *
runs_forget(Runs *self, PyObject *args)
{
    PyObject *address, *live;
    if (!PyArg_ParseTuple(args, "OO:forget", &address, &live)) {
        return NULL;
    }
    void *predictor = PyLong_AsVoidPtr(address);
    if (predictor == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (self->slots != NULL) {
        Slot *slot = &self->slots[slot_of(self->slots, self->capacity, predictor)];
        if (slot->predictor == predictor && slot->live == live) {
            slot->predictor = TOMBSTONE;
            Py_CLEAR(slot->read);
            Py_CLEAR(slot->live);
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
runs_known(Runs *self, PyObject *predictor)
{
    PyObject *live = known(self, predictor);
    return Py_NewRef(live != NULL ? live : Py_None);
}

/* The run's ended: kept for the next fold, or past max_ended counted as not counted. Steals the
 * references to live and inputs; calls no Python code (the original's error may be raised). */
static void
ended(Runs *self, PyObject *live, PyObject *inputs, long long start, long long end, unsigned long thread, int copied)
{
    if (self->ended_count == self->ended_capacity) {
        Py_ssize_t capacity = Py_MIN(self->ended_capacity ? self->ended_capacity * 2 : 256, self->max_ended);
        Ended *grown = capacity > self->ended_capacity ? PyMem_Realloc(self->ended, (size_t)capacity * sizeof(Ended)) : NULL;
        if (grown == NULL) {
            self->not_counted++;
            Py_DECREF(live);
            Py_DECREF(inputs);
            return;
        }
        self->ended = grown;
        self->ended_capacity = capacity;
    }
    Ended *run = &self->ended[self->ended_count++];
    run->live = live;
    run->inputs = inputs;
    run->start = start;
    run->end = end;
    run->thread = thread;
    run->copied = copied;
}

static void
release(Ended *runs, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_XDECREF(runs[i].live);
        Py_XDECREF(runs[i].inputs);
    }
    PyMem_Free(runs);
}

/* The runs taken as Python tuples, (live, start, end, inputs) or (live, start) without `with_end`;
 * the references are the tuples', and `runs` is freed. */
static PyObject *
as_list(Ended *runs, Py_ssize_t count, int with_end)
{
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list != NULL && i < count; i++) {
        PyObject *item = with_end ? Py_BuildValue("(NLLNki)", runs[i].live, runs[i].start, runs[i].end, runs[i].inputs,
                                                  runs[i].thread, runs[i].copied)
                                  : Py_BuildValue("(NL)", runs[i].live, runs[i].start);
        runs[i].live = runs[i].inputs = NULL; /* taken by the item, or released if it was not made */
        if (item == NULL) {
            Py_CLEAR(list);
        }
        else {
            PyList_SET_ITEM(list, i, item);
        }
    }
    release(runs, count);
    return list;
}

/* (until, [(live, start, end, inputs, thread, copied)] of the runs ended since the last take, [(live, start)] of
 * those running). The clock is read and the runs taken off the Runs before any Python object is
 * made: making one may collect garbage, whose finalizers may let other threads end runs. */
static PyObject *
runs_take(Runs *self, PyObject *unused)
{
    long long until = now_ns();
    Py_ssize_t in_flight = 0;
    for (Running *run = self->running; run != NULL; run = run->next) {
        in_flight++;
    }
    Ended *running = PyMem_Calloc((size_t)(in_flight ? in_flight : 1), sizeof(Ended));
    if (running == NULL) {
        return PyErr_NoMemory();
    }
    Py_ssize_t index = 0;
    for (Running *run = self->running; run != NULL; run = run->next, index++) {
        running[index].live = Py_NewRef(run->live);
        running[index].start = run->start;
    }
    Ended *done = self->ended;
    Py_ssize_t count = self->ended_count;
    self->ended = NULL;
    self->ended_count = self->ended_capacity = 0;
    PyObject *done_list = as_list(done, count, 1);
    PyObject *running_list = as_list(running, in_flight, 0);
    if (done_list == NULL || running_list == NULL) {
        Py_XDECREF(done_list);
        Py_XDECREF(running_list);
        return NULL;
    }
    return Py_BuildValue("(LNN)", until, done_list, running_list);
}

/* In the child of a fork: the runs that ended and were not taken, and those running in the parent's
 * threads, were the parent's: forgotten. The list of those running is dropped unread (its nodes are on
 * stacks of threads the child does not have, which its own threads may reuse); a run of the forking
 * thread's own still inside Paddle finds the fork counted when it ends, and leaves the list alone. */
static PyObject *
runs_forked(Runs *self, PyObject *unused)
{
    Ended *ended = self->ended;
    Py_ssize_t count = self->ended_count;
    self->ended = NULL; /* taken off first: releasing them may run finalizers that run() */
    self->ended_count = self->ended_capacity = 0;
    self->running = NULL;
    self->not_counted = 0;
    self->forks++;
    release(ended, count);
    Py_RETURN_NONE;
}

static PyObject *
runs_get_not_counted(Runs *self, void *closure)
{
    return PyLong_FromSsize_t(self->not_counted);
}

static PyObject *
runs_get_waiting(Runs *self, void *closure)
{
    return PyLong_FromSsize_t(self->ended_count);
}

static int
runs_traverse(Runs *self, visitproc visit, void *arg)
{
    Py_VISIT(self->process);
    Py_VISIT(self->wake);
    Py_VISIT(self->no_inputs);
    for (Py_ssize_t i = 0; i < self->capacity; i++) {
        Py_VISIT(self->slots[i].live);
        Py_VISIT(self->slots[i].read);
    }
    for (Py_ssize_t i = 0; i < self->ended_count; i++) {
        Py_VISIT(self->ended[i].live);
        Py_VISIT(self->ended[i].inputs);
    }
    return 0;
}

static int
runs_clear(Runs *self)
{
    Py_CLEAR(self->process);
    Py_CLEAR(self->wake);
    Py_CLEAR(self->no_inputs);
    for (Py_ssize_t i = 0; i < self->capacity; i++) {
        Py_CLEAR(self->slots[i].live);
        Py_CLEAR(self->slots[i].read);
    }
    PyMem_Free(self->slots);
    self->slots = NULL;
    self->capacity = self->used = 0;
    for (Py_ssize_t i = 0; i < self->ended_count; i++) {
        Py_CLEAR(self->ended[i].live);
        Py_CLEAR(self->ended[i].inputs);
    }
    self->ended_count = 0;
    return 0;
}

static void
runs_dealloc(Runs *self)
{
    PyObject_GC_UnTrack(self);
    runs_clear(self);
    PyMem_Free(self->ended);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
runs_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"process", "wake", "no_inputs", "fold_at", "max_ended", "max_pending", NULL};
    PyObject *process, *wake, *no_inputs;
    Py_ssize_t fold_at, max_ended, max_pending;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOnnn:Runs", names, &process, &wake, &no_inputs, &fold_at,
                                     &max_ended, &max_pending)) {
        return NULL;
    }
    if (fold_at < 1 || max_ended < 1 || max_pending < 1) {
        PyErr_SetString(PyExc_ValueError, "Runs: fold_at, max_ended and max_pending are counts of at least 1");
        return NULL;
    }
    Runs *self = (Runs *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->process = Py_NewRef(process);
    self->wake = Py_NewRef(wake);
    self->no_inputs = Py_NewRef(no_inputs);
    self->fold_at = fold_at;
    self->max_ended = max_ended;
    self->max_pending = max_pending;
    return (PyObject *)self;
}

/* ---- the wrappers ---- */

typedef struct {
    PyObject_HEAD
    PyObject *original;
    Runs *runs; /* whose runs (run()) and limits (copy_from_cpu) it notes; NULL for the changes' wrappers */
    vectorcallfunc vectorcall;
} Wrapper;

static PyObject *
recorded_run(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Wrapper *wrapper = (Wrapper *)callable;
    Runs *runs = wrapper->runs;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1 || nargs > 2 || (kwnames != NULL && (nargs != 1 || PyTuple_GET_SIZE(kwnames) != 1 ||
                                                       argument(args, nargs, kwnames, 1, str_inputs) == NULL))) {
        /* not a call Paddle's run() takes (another keyword, inputs given twice, more than one): its
         * TypeError, and no run */
        return PyObject_Vectorcall(wrapper->original, args, nargsf, kwnames);
    }
    PyObject *given = nargs > 1 || kwnames != NULL ? args[1] : NULL;
    if (runs->ended_count >= runs->fold_at) { /* runs pile up: the writer is woken to fold them */
        PyObject *done = PyObject_CallNoArgs(runs->wake);
        if (done == NULL && note_failure(runs->process, "waking the writer") < 0) {
            return NULL;
        }
        Py_XDECREF(done);
    }
    PyObject *predictor = args[0];
    Slot *slot = found(runs, predictor);
    PyObject *live = slot != NULL ? slot->live : NULL;
    if (live != NULL) {
        Py_INCREF(live);
    }
    else if ((live = PyObject_CallMethodOneArg(runs->process, str_live_of, predictor)) == NULL) {
        return note_failure(runs->process, "before run()") < 0 ? NULL
                                                                : PyObject_Vectorcall(wrapper->original, args, nargsf, kwnames);
    }
    else {
        slot = found(runs, predictor); /* live_of remembered it, and may have grown the table */
    }
    ThreadInputs *mine = this_thread != NULL ? this_thread : thread_inputs();
    if (mine == NULL) {
        Py_DECREF(live);
        return note_failure(runs->process, "before run()") < 0 ? NULL
                                                                : PyObject_Vectorcall(wrapper->original, args, nargsf, kwnames);
    }
    unsigned long thread = mine->number;
    int copied = mine->count > 0 ? COPIED : 0;
    if (slot != NULL && slot->live == live) {
        if (copied && slot->last_thread != 0 && slot->last_thread != thread && slot->last_run_at >= mine->copied_at) {
            copied = CROSSED;
        }
        slot->last_thread = thread;
        slot->last_run_at = handles_changed;
    }
    PyObject *inputs = take_inputs();
    if (inputs == NULL && given == NULL && !PyErr_Occurred()) {
        inputs = read_before(runs, predictor, live);
    }
    if (inputs == NULL || given != NULL) {
        Py_XDECREF(inputs);
        unsigned long long changed = handles_changed;
        inputs = PyErr_Occurred() ? NULL
                                  : PyObject_CallMethodOneArg(live, str_inputs_of, given != NULL ? given : runs->no_inputs);
        if (inputs == NULL) {
            Py_DECREF(live);
            return note_failure(runs->process, "before run()") < 0 ? NULL
                                                                    : PyObject_Vectorcall(wrapper->original, args, nargsf, kwnames);
        }
        if (given == NULL) {
            keep_read(runs, predictor, live, inputs, changed);
        }
    }
    Running node = {NULL, runs->running, live, 0, runs->forks};
    if (node.next != NULL) {
        node.next->previous = &node;
    }
    runs->running = &node;
    node.start = now_ns();
    PyObject *result = PyObject_Vectorcall(wrapper->original, args, nargsf, kwnames);
    long long end = now_ns();
    if (given != NULL) {
        handles_changed++; /* run(inputs) leaves them in the input handles */
    }
    if (node.forks != runs->forks) { /* the process forked inside this run: it and its list were the parent's */
        Py_DECREF(live);
        Py_DECREF(inputs);
        return result;
    }
    if (node.previous != NULL) {
        node.previous->next = node.next;
    }
    else {
        runs->running = node.next;
    }
    if (node.next != NULL) {
        node.next->previous = node.previous;
    }
    ended(runs, live, inputs, node.start, end, thread, copied);
    return result;
}

static PyObject *
recorded_copy(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Wrapper *wrapper = (Wrapper *)callable;
    PyObject *result = PyObject_Vectorcall(wrapper->original, args, nargsf, kwnames);
    handles_changed++;
    if (result != NULL) {
        PyObject *data = argument(args, PyVectorcall_NARGS(nargsf), kwnames, 1, str_data);
        if (data != NULL && note_copy(data, wrapper->runs->max_pending) < 0) {
            Py_CLEAR(result); /* a KeyboardInterrupt raised meanwhile goes on, as it would through Python's */
        }
    }
    return result;
}

/* Tensor.reshape, share_external_data and the like: a change of an input handle, noted. */
static PyObject *
recorded_change(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *result = PyObject_Vectorcall(((Wrapper *)callable)->original, args, nargsf, kwnames);
    handles_changed++;
    return result;
}

static PyObject *
bound(PyObject *self, PyObject *instance, PyObject *owner)
{
    if (instance == NULL || instance == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, instance);
}

static PyObject *
wrapper_doc(Wrapper *self, void *closure)
{
    PyObject *doc = PyObject_GetAttrString(self->original, "__doc__");
    if (doc == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return doc;
}

static PyObject *
wrapper_name(Wrapper *self, void *closure)
{
    return PyObject_GetAttrString(self->original, "__name__");
}

static PyObject *
wrapper_wrapped(Wrapper *self, void *closure)
{
    return Py_NewRef(self->original);
}

static int
wrapper_traverse(Wrapper *self, visitproc visit, void *arg)
{
    Py_VISIT(self->original);
    Py_VISIT(self->runs);
    return 0;
}

static int
wrapper_clear(Wrapper *self)
{
    Py_CLEAR(self->original);
    Py_CLEAR(self->runs);
    return 0;
}

static void
wrapper_dealloc(Wrapper *self)
{
    PyObject_GC_UnTrack(self);
    wrapper_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyGetSetDef wrapper_getset[] = {
    {"__doc__", (getter)wrapper_doc, NULL, NULL, NULL},
    {"__name__", (getter)wrapper_name, NULL, NULL, NULL},
    {"__wrapped__", (getter)wrapper_wrapped, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject WrapperType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "paddle_doctor.record._native.Wrapper",
    .tp_doc = "Paddle's method, recorded: called as it is, it does what the original does and returns what it returns.",
    .tp_basicsize = sizeof(Wrapper),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(Wrapper, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = bound,
    .tp_traverse = (traverseproc)wrapper_traverse,
    .tp_clear = (inquiry)wrapper_clear,
    .tp_dealloc = (destructor)wrapper_dealloc,
    .tp_getset = wrapper_getset,
};

static PyObject *
wrapper_new(PyObject *original, Runs *runs, vectorcallfunc call)
{
    Wrapper *self = PyObject_GC_New(Wrapper, &WrapperType);
    if (self == NULL) {
        return NULL;
    }
    self->original = Py_NewRef(original);
    self->runs = runs;
    Py_XINCREF(runs);
    self->vectorcall = call;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *
runs_wrap_run(Runs *self, PyObject *original)
{
    return wrapper_new(original, self, recorded_run);
}

static PyObject *
runs_wrap_copy(Runs *self, PyObject *original)
{
    return wrapper_new(original, self, recorded_copy);
}

static PyObject *
runs_wrap_change(Runs *self, PyObject *original)
{
    return wrapper_new(original, NULL, recorded_change);
}

static PyObject *
runs_thread_number(Runs *self, PyObject *unused)
{
    ThreadInputs *mine = thread_inputs();
    return mine != NULL ? PyLong_FromUnsignedLong(mine->number) : NULL;
}

static PyMethodDef runs_methods[] = {
    {"thread_number", (PyCFunction)runs_thread_number, METH_NOARGS,
     "thread_number(): this thread's number (1 for the first to run, copy or ask for an output)"},
    {"remember", (PyCFunction)runs_remember, METH_VARARGS, "remember(predictor, live): runs of predictor are live's"},
    {"forget", (PyCFunction)runs_forget, METH_VARARGS, "forget(id(predictor), live): the predictor, live's, is gone"},
    {"known", (PyCFunction)runs_known, METH_O, "known(predictor): its LivePredictor, or None"},
    {"take", (PyCFunction)runs_take, METH_NOARGS,
     "take() -> (until, [(live, start, end, inputs, thread, copied)] ended since the last take, [(live, start)] running)"},
    {"wrap_run", (PyCFunction)runs_wrap_run, METH_O, "wrap_run(Predictor.run): the run() that notes each call"},
    {"wrap_copy", (PyCFunction)runs_wrap_copy, METH_O,
     "wrap_copy(Tensor.copy_from_cpu): the copy that notes each array's shape and dtype for its thread's next run()"},
    {"wrap_change", (PyCFunction)runs_wrap_change, METH_O,
     "wrap_change(Tensor.reshape): the method, noting that an input handle may have changed (the next run() reads them)"},
    {"forked", (PyCFunction)runs_forked, METH_NOARGS, "forked(): in the child of a fork, the parent's runs forgotten"},
    {NULL},
};

static PyGetSetDef runs_getset[] = {
    {"not_counted", (getter)runs_get_not_counted, NULL, "runs not counted: past max_ended waiting", NULL},
    {"waiting", (getter)runs_get_waiting, NULL, "runs ended and not yet taken", NULL},
    {NULL},
};

static PyTypeObject RunsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "paddle_doctor.record._native.Runs",
    .tp_doc = "Runs(process, wake, no_inputs, fold_at, max_ended, max_pending): the runs of a process's predictors.",
    .tp_basicsize = sizeof(Runs),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = runs_new,
    .tp_traverse = (traverseproc)runs_traverse,
    .tp_clear = (inquiry)runs_clear,
    .tp_dealloc = (destructor)runs_dealloc,
    .tp_methods = runs_methods,
    .tp_getset = runs_getset,
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "paddle_doctor.record._native",
    .m_doc = "The recorder's runs kept in C (see python_runs.py for the same in Python).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&ThreadInputsType) < 0 || PyType_Ready(&RunsType) < 0 || PyType_Ready(&WrapperType) < 0) {
        return NULL;
    }
    pending_key = PyUnicode_InternFromString("paddle_doctor.record inputs copied in");
    str_shape = PyUnicode_InternFromString("shape");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_inputs = PyUnicode_InternFromString("inputs");
    str_data = PyUnicode_InternFromString("data");
    str_inputs_of = PyUnicode_InternFromString("inputs_of");
    str_live_of = PyUnicode_InternFromString("live_of");
    str_failed = PyUnicode_InternFromString("failed");
    if (pending_key == NULL || str_shape == NULL || str_dtype == NULL || str_inputs == NULL || str_data == NULL ||
        str_inputs_of == NULL || str_live_of == NULL || str_failed == NULL) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&RunsType);
    if (PyModule_AddObject(module, "Runs", (PyObject *)&RunsType) < 0) {
        Py_DECREF(&RunsType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
