/* bulkcap: a Valgrind tool that records a program's memory behaviour as bulksim workload
   streams, one per thread of every process (see README and docs/capture.md).

   Copyright (C) 2024 the bulksim authors.  This file is part of the bulkcap Valgrind tool
   and, like Valgrind's core it links against, is licensed under the GNU General Public
   License version 2 or later (see COPYING in this directory).  It only writes files in
   bulksim's documented workload format; bulksim itself reads those files and links none of
   this code.

   What it writes, into the directory given by --capture-out (the driver's raw directory):
   - stream-<id>.raw: the uncompressed body of a binary workload trace (magic BSWL, version
     2, child flag, then opcode bytes and LEB128 operands).  <id> is the global thread id,
     allocated in creation order across every process by creating ids/<id> exclusively, so
     fork (F) and spawn (T) operands are final when written.
   - index: one line per fact, appended atomically by every process: `thread <id> <kind>
     <parent> <pid> <tid>`, `counts <id> key=value...` (what the stream gained since its last
     counts line: one at its end, and one before an execve, whose instance's memory goes with
     the exec), `end <id>` (its X is written).
   - budget: one 8-byte instruction count per id, summed for --capture-max-instructions.
   - exec-<pid>: the id whose stream continues after an execve, the next id to try and the
     stream's instructions so far (read by the new instance).
   - limit: present when the instruction limit stopped the capture. */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_amd64.h"

#define PAGE 4096ULL
#define BUF_BYTES (256 * 1024)
/* Room for the largest record: an opcode and three ten-byte varints. */
#define RECORD_MAX 32
#define MAX_COMPUTE (1ULL << 32)
/* Instructions a thread runs between looks at the shared budget. */
#define BUDGET_STRIDE_BITS 16
/* The kernel's own buffers of a copy between files (copy_file_range, sendfile, splice): at
   2^47 and up, above Linux's x86-64 user address space, so no program mapping can overlap
   them, and below bulksim's 2^48 limit.  Each stream has its own pair of chunks (source and
   destination) there, so threads never share them.  A copy is recorded a chunk at a time:
   64 KiB, the 16 pages of the pipe the kernel's generic file copy (splice) moves data
   through. */
#define KERNEL_BUFFERS (1ULL << 47)
#define KERNEL_CHUNK (64ULL * 1024)

/* ---- options ---------------------------------------------------------------------- */

static const HChar* clo_out = NULL;
static const HChar* clo_max = NULL;
static ULong max_instructions = 0; /* 0: no limit */

static Bool bc_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--capture-out", clo_out) {}
   else if VG_STR_CLO(arg, "--capture-max-instructions", clo_max) {}
   else return False;
   return True;
}

static void bc_print_usage(void)
{
   VG_(printf)("    --capture-out=DIR                 raw output directory (required)\n"
               "    --capture-max-instructions=N      stop every process once all threads\n"
               "                                      together ran N instructions [no limit]\n");
}

static void bc_print_debug_usage(void) {}

/* ---- per-thread streams ------------------------------------------------------------ */

/* Kinds of bulk call, from the function name or the rep-prefixed instruction. */
enum { BULK_NONE = 0, BULK_MOVE, BULK_PMOVE, BULK_SET, BULK_ZERO };

typedef struct {
   Bool live;
   Int id;              /* global thread id: the stream's number */
   Int fd;
   UChar* buf;
   Int used;
   ULong pending_c;     /* non-memory instructions since the last record */
   ULong total;         /* every instruction this thread ran (for the budget) */
   ULong reported;      /* the part of total already in a counts line of the index */
   ULong budget_seen;   /* total >> BUDGET_STRIDE_BITS at the last budget look */
   Bool needs_resident; /* the initial mappings (N) are still to be written */
   /* Inside a memcpy-family call: its loads, stores and instructions are the bulk event. */
   Bool in_bulk;
   Addr bulk_sp;        /* the stack pointer at the call's entry (it points at the return address) */
   ULong bulk_saved_c;
   /* The rep-prefixed string instruction being repeated, and the count its next iteration sees. */
   Addr rep_ip;
   ULong rep_next;
   /* Counts for the summary since the last counts line: events by opcode, bytes by opcode,
      and the kernel's copies between files (also in the G and K counts). */
   ULong events[256];
   ULong bytes[256];
   ULong file_copies;
   ULong file_copy_bytes;
} Stream;

/* One per Valgrind thread slot (VG_N_THREADS, known once options are read). */
static Stream* streams = NULL;
static Int n_slots = 0;
static Stream* cur = NULL;      /* the stream of the thread running client code */
static ThreadId cur_tid = VG_INVALID_THREADID;
/* Instructions counted by the instrumented code since the last flush: the low 32 bits are
   non-memory instructions, the high 32 bits all instructions (a flush happens at least every
   scheduler time slice, far below 2^32 instructions). */
static ULong g_counts = 0;
static Int next_id_hint = 0;
static Int budget_fd = -1;
static Int index_fd = -1;
static Int fork_child_id = -1;

static void die(const HChar* what, const HChar* path)
{
   VG_(message)(Vg_UserMsg, "bulkcap: %s: %s\n", what, path ? path : "");
   VG_(exit)(97);
}

static void write_all(Int fd, const void* data, Int n, const HChar* what)
{
   const UChar* p = data;
   while (n > 0) {
      Int w = VG_(write)(fd, p, n);
      if (w <= 0)
         die("cannot write", what);
      p += w;
      n -= w;
   }
}

static void index_line(const HChar* line)
{
   write_all(index_fd, line, VG_(strlen)(line), "index");
}

static void flush_stream(Stream* s)
{
   if (s->used > 0) {
      write_all(s->fd, s->buf, s->used, "stream");
      s->used = 0;
   }
}

static inline void put_byte(Stream* s, UChar b)
{
   s->buf[s->used++] = b;
}

static inline void put_varint(Stream* s, ULong v)
{
   while (v >= 0x80) {
      put_byte(s, (UChar)(v | 0x80));
      v >>= 7;
   }
   put_byte(s, (UChar)v);
}

static inline void begin_record(Stream* s, UChar op, ULong bytes)
{
   if (s->used + RECORD_MAX > BUF_BYTES)
      flush_stream(s);
   put_byte(s, op);
   s->events[op]++;
   s->bytes[op] += bytes;
}

/* Writes the pending non-memory instructions as C records (each at most 2^32). */
static void put_compute(Stream* s)
{
   while (s->pending_c > 0) {
      ULong n = s->pending_c > MAX_COMPUTE ? MAX_COMPUTE : s->pending_c;
      begin_record(s, 'C', 0);
      put_varint(s, n);
      s->bytes['C'] += n; /* for C, "bytes" holds the instructions */
      s->pending_c -= n;
   }
}

static void put0(Stream* s, UChar op)
{
   put_compute(s);
   begin_record(s, op, 0);
}

static void put1(Stream* s, UChar op, ULong a)
{
   put_compute(s);
   begin_record(s, op, 0);
   put_varint(s, a);
}

static void put_range(Stream* s, UChar op, ULong addr, ULong bytes)
{
   if (bytes == 0)
      return;
   put_compute(s);
   begin_record(s, op, bytes);
   put_varint(s, addr);
   put_varint(s, bytes);
}

static void path_of(HChar* out, const HChar* name)
{
   VG_(snprintf)(out, 4096, "%s/%s", clo_out, name);
}

static Int open_or_die(const HChar* path, Int flags)
{
   SysRes r = VG_(open)(path, flags, 0600);
   if (sr_isError(r))
      die("cannot open", path);
   return (Int)sr_Res(r);
}

/* The next global thread id: the first ids/<n> this process manages to create. */
static Int alloc_id(void)
{
   HChar path[4096];
   for (Int n = next_id_hint;; n++) {
      HChar name[64];
      VG_(sprintf)(name, "ids/%d", n);
      path_of(path, name);
      SysRes r = VG_(open)(path, VKI_O_CREAT | VKI_O_EXCL | VKI_O_WRONLY, 0600);
      if (!sr_isError(r)) {
         VG_(close)((Int)sr_Res(r));
         next_id_hint = n + 1;
         return n;
      }
      if (sr_Err(r) != VKI_EEXIST)
         die("cannot create thread id file", path);
   }
}

static void reset_stream(Stream* s)
{
   UChar* buf = s->buf;
   VG_(memset)(s, 0, sizeof *s);
   s->buf = buf ? buf : VG_(malloc)("bulkcap.buf", BUF_BYTES);
   s->fd = -1;
}

/* Starts stream `id` for thread `tid`: a new file with its header, or (after an exec) the
   existing file continued. */
static void open_stream(ThreadId tid, Int id, Bool child, Bool append)
{
   Stream* s = &streams[tid];
   reset_stream(s);
   s->live = True;
   s->id = id;
   HChar name[64], path[4096];
   VG_(sprintf)(name, "stream-%d.raw", id);
   path_of(path, name);
   s->fd = open_or_die(path, append ? (VKI_O_WRONLY | VKI_O_APPEND)
                                    : (VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC));
   if (!append) {
      static const UChar head[4] = {'B', 'S', 'W', 'L'};
      for (Int i = 0; i < 4; i++)
         put_byte(s, head[i]);
      put_byte(s, 2);
      put_byte(s, child ? 1 : 0);
   }
}

/* Appends what the stream gained since its last counts line to the index, then starts
   counting afresh (the driver sums a stream's lines). */
static void write_counts(Stream* s)
{
   static const UChar ops[] = "CLlSsMIAUNEKGFTYWX";
   HChar line[2048];
   Int n = VG_(sprintf)(line, "counts %d instructions=%llu", s->id, s->total - s->reported);
   for (Int i = 0; ops[i]; i++) {
      UChar op = ops[i];
      n += VG_(sprintf)(line + n, " %c=%llu", op, s->events[op]);
      if (s->bytes[op])
         n += VG_(sprintf)(line + n, " %c_bytes=%llu", op, s->bytes[op]);
   }
   n += VG_(sprintf)(line + n, " file_copies=%llu file_copy_bytes=%llu", s->file_copies,
                     s->file_copy_bytes);
   VG_(sprintf)(line + n, "\n");
   index_line(line);
   s->reported = s->total;
   VG_(memset)(s->events, 0, sizeof s->events);
   VG_(memset)(s->bytes, 0, sizeof s->bytes);
   s->file_copies = s->file_copy_bytes = 0;
}

/* Moves the instrumented code's counts into the running thread's stream. */
static inline void account(ULong counts)
{
   ULong g = g_counts + counts;
   g_counts = 0;
   if (cur) {
      cur->pending_c += g & 0xffffffffULL;
      cur->total += g >> 32;
   }
}

static void finish_stream(Stream* s)
{
   if (!s->live)
      return;
   put0(s, 'X');
   flush_stream(s);
   VG_(close)(s->fd);
   write_counts(s);
   HChar line[64];
   VG_(sprintf)(line, "end %d\n", s->id);
   index_line(line);
   s->live = False;
}

static void stop_at_limit(void)
{
   HChar path[4096];
   path_of(path, "limit");
   SysRes r = VG_(open)(path, VKI_O_CREAT | VKI_O_WRONLY, 0600);
   if (!sr_isError(r))
      VG_(close)((Int)sr_Res(r));
   for (Int t = 0; t < n_slots; t++)
      finish_stream(&streams[t]);
   VG_(exit)(0);
}

/* Publishes this thread's instruction count and stops everything once the sum over every
   thread of every process reaches the limit. */
static void look_at_budget(Stream* s)
{
   s->budget_seen = s->total >> BUDGET_STRIDE_BITS;
   if (max_instructions == 0)
      return;
   ULong mine = s->total;
   VG_(lseek)(budget_fd, (Off64T)s->id * 8, VKI_SEEK_SET);
   write_all(budget_fd, &mine, 8, "budget");
   VG_(lseek)(budget_fd, 0, VKI_SEEK_SET);
   static ULong slots[4096];
   ULong sum = 0;
   Int got;
   while ((got = VG_(read)(budget_fd, slots, sizeof slots)) > 0)
      for (Int i = 0; i < got / 8; i++)
         sum += slots[i];
   if (sum >= max_instructions)
      stop_at_limit();
}

static inline void check_budget(Stream* s)
{
   if ((s->total >> BUDGET_STRIDE_BITS) != s->budget_seen)
      look_at_budget(s);
}

/* ---- the initial mappings ------------------------------------------------------------ */

/* Every client segment as resident (N), and the main stack's reservation below it, so the
   stack can grow without an unmapped access. */
static void put_resident_mappings(ThreadId tid, Stream* s)
{
   static Addr starts[4096];
   Int n = VG_(am_get_segment_starts)(SkAnonC | SkFileC | SkShmC, starts, 4096);
   if (n < 0)
      die("too many client segments", NULL);
   for (Int i = 0; i < n; i++) {
      NSegment const* seg = VG_(am_find_nsegment)(starts[i]);
      if (seg)
         put_range(s, 'N', seg->start, seg->end - seg->start + 1);
   }
   NSegment const* stack = VG_(am_find_nsegment)(VG_(get_SP)(tid));
   if (stack && stack->start > 0) {
      NSegment const* below = VG_(am_find_nsegment)(stack->start - 1);
      if (below && below->kind == SkResvn)
         put_range(s, 'N', below->start, below->end - below->start + 1);
   }
   s->needs_resident = False;
}

/* ---- scheduler ---------------------------------------------------------------------- */

/* The thread that last ran client code. When another thread of this process takes over, the
   one that stopped records the switch (`Y id`), so the simulator replays the threads in the
   order Valgrind's scheduler ran them (their map events before the other threads' accesses
   that depend on them). */
static ThreadId last_ran = VG_INVALID_THREADID;

static void bc_start_client_code(ThreadId tid, ULong blocks_done)
{
   if (last_ran != tid && last_ran < (ThreadId)n_slots && tid < (ThreadId)n_slots &&
       streams[last_ran].live && !streams[last_ran].needs_resident && streams[tid].live)
      put1(&streams[last_ran], 'Y', (ULong)streams[tid].id);
   last_ran = tid;
   cur_tid = tid;
   cur = streams[tid].live ? &streams[tid] : NULL;
   if (cur) {
      if (cur->needs_resident)
         put_resident_mappings(tid, cur);
      check_budget(cur);
   }
}

static void bc_stop_client_code(ThreadId tid, ULong blocks_done)
{
   account(0);
   if (cur)
      check_budget(cur);
}

/* ---- helpers called by the instrumented code ------------------------------------------ */

static void put_access(Stream* s, UChar one_line, UChar ranged, Addr a, ULong size)
{
   put_compute(s);
   /* A plain L/S when the access stays inside one 64-byte line: one byte less per record. */
   if ((a & 63) + size <= 64) {
      begin_record(s, one_line, size);
      put_varint(s, a);
   } else {
      begin_record(s, ranged, size);
      put_varint(s, a);
      put_varint(s, size);
   }
}

static VG_REGPARM(3) void bc_load(Addr a, ULong size, ULong counts)
{
   account(counts);
   Stream* s = cur;
   if (!s || s->in_bulk)
      return;
   put_access(s, 'L', 'l', a, size);
   check_budget(s);
}

static VG_REGPARM(3) void bc_store(Addr a, ULong size, ULong counts)
{
   account(counts);
   Stream* s = cur;
   if (!s || s->in_bulk)
      return;
   put_access(s, 'S', 's', a, size);
   check_budget(s);
}

/* A copy as one memcpy event, or a load and a store of the ranges when they overlap (the
   format's memcpy needs disjoint ranges; memmove allows overlap). */
static void put_copy(Stream* s, Addr dst, Addr src, ULong n)
{
   if (n == 0)
      return;
   if (src < dst + n && dst < src + n) {
      put_range(s, 'l', src, n);
      put_range(s, 's', dst, n);
      return;
   }
   put_compute(s);
   begin_record(s, 'M', n);
   put_varint(s, src);
   put_varint(s, dst);
   put_varint(s, n);
}

static void put_fill(Stream* s, Addr dst, ULong n, UChar value)
{
   if (n == 0)
      return;
   put_compute(s);
   begin_record(s, 'I', n);
   put_varint(s, dst);
   put_varint(s, n);
   put_varint(s, value);
}

/* Entry of a memcpy-family function: one bulk event from the argument registers; the call's
   own instructions and accesses are dropped until it returns. */
static void bc_bulk_enter(ULong kind, ULong rdi, ULong rsi, ULong rdx, ULong rsp, ULong counts)
{
   account(counts);
   Stream* s = cur;
   if (!s || s->in_bulk)
      return;
   /* The arguments must name client memory: this rejects calls that only share the name,
      such as the IFUNC resolver glibc exports as `memcpy` (called by the dynamic loader with
      other arguments), whose accesses are then recorded as usual. */
   ULong n = kind == BULK_ZERO ? rsi : rdx;
   if (n > 0 && !VG_(am_is_valid_for_client)(rdi, n, VKI_PROT_WRITE))
      return;
   if (n > 0 && (kind == BULK_MOVE || kind == BULK_PMOVE) &&
       !VG_(am_is_valid_for_client)(rsi, n, VKI_PROT_READ))
      return;
   switch (kind) {
   case BULK_MOVE:
   case BULK_PMOVE:
      put_copy(s, rdi, rsi, rdx);
      break;
   case BULK_SET:
      put_fill(s, rdi, rdx, (UChar)rsi);
      break;
   case BULK_ZERO:
      put_fill(s, rdi, rsi, 0);
      break;
   }
   s->in_bulk = True;
   s->bulk_sp = rsp;
   s->bulk_saved_c = s->pending_c;
   check_budget(s);
}

/* A return inside a memcpy-family function: the call is over once the stack pointer is
   above the one at its entry (the return address popped). */
static VG_REGPARM(2) void bc_bulk_leave(ULong rsp, ULong counts)
{
   account(counts);
   Stream* s = cur;
   if (!s || !s->in_bulk || rsp <= s->bulk_sp)
      return;
   s->in_bulk = False;
   s->pending_c = s->bulk_saved_c;
}

/* One iteration of a rep-prefixed movs/stos.  VEX runs each iteration as its own pass over
   the instruction; the first one (a new ip, or a count that does not continue the last)
   writes the whole operation as one event. */
static void bc_rep(ULong ip, ULong shape, ULong rcx, ULong rsi, ULong rdi, ULong rax)
{
   account(0);
   Stream* s = cur;
   if (!s || s->in_bulk)
      return;
   Bool continues = ip == s->rep_ip && rcx == s->rep_next;
   s->rep_ip = ip;
   s->rep_next = rcx > 0 ? rcx - 1 : 0;
   if (continues || rcx == 0)
      return;
   ULong width = shape & 0xff;
   Bool stos = (shape >> 8) & 1;
   Bool down = (shape >> 9) & 1; /* direction flag set: addresses decrease */
   ULong n = rcx * width;
   Addr dst = down ? rdi - n + width : rdi;
   if (stos) {
      /* A uniform byte pattern is a meminit; any other pattern is stores to the range. */
      ULong pattern = width == 8 ? rax : rax & ((1ULL << (8 * width)) - 1);
      Bool uniform = True;
      for (ULong b = 1; b < width; b++)
         if (((pattern >> (8 * b)) & 0xff) != (pattern & 0xff))
            uniform = False;
      if (uniform)
         put_fill(s, dst, n, (UChar)pattern);
      else
         put_range(s, 's', dst, n);
   } else {
      Addr src = down ? rsi - n + width : rsi;
      put_copy(s, dst, src, n);
   }
   check_budget(s);
}

/* ---- memcpy-family names -------------------------------------------------------------- */

/* The bulk kind of a function name.  Rules: drop a leading `__GI_` (glibc's hidden aliases)
   and then every leading underscore; the rest must be one of memcpy, memmove, mempcpy,
   memset, bzero, either alone or followed by `_` and anything (glibc's variants such as
   __memmove_avx_unaligned_erms, __memset_avx2_unaligned_erms, __memcpy_chk, __mempcpy_sse2).
   wmemset, wmemcpy and explicit_bzero do not match. */
static Int bulk_kind_of(const HChar* name)
{
   if (VG_(strncmp)(name, "__GI_", 5) == 0)
      name += 5;
   while (*name == '_')
      name++;
   static const struct {
      const HChar* base;
      Int kind;
   } bases[] = {
      {"memcpy", BULK_MOVE}, {"memmove", BULK_MOVE}, {"mempcpy", BULK_PMOVE},
      {"memset", BULK_SET},  {"bzero", BULK_ZERO},
   };
   for (UInt i = 0; i < sizeof bases / sizeof bases[0]; i++) {
      SizeT len = VG_(strlen)(bases[i].base);
      if (VG_(strncmp)(name, bases[i].base, len) == 0 && (name[len] == 0 || name[len] == '_'))
         return bases[i].kind;
   }
   return BULK_NONE;
}

/* The shape of a rep-prefixed movs/stos at `ip` (width | stos << 8), or 0 for any other
   instruction. */
static ULong rep_shape(Addr ip, UInt len)
{
   const UChar* p = (const UChar*)ip;
   Bool rep = False, opsize16 = False, rexw = False;
   UInt i = 0;
   for (; i < len; i++) {
      UChar b = p[i];
      if (b == 0xf3)
         rep = True;
      else if (b == 0x66)
         opsize16 = True;
      else if (b == 0xf2 || b == 0x67 || b == 0x2e || b == 0x3e || b == 0x26 || b == 0x36 ||
               b == 0x64 || b == 0x65)
         continue;
      else
         break;
   }
   if (i < len && (p[i] & 0xf0) == 0x40) {
      rexw = (p[i] & 0x08) != 0;
      i++;
   }
   if (!rep || i >= len)
      return 0;
   UChar op = p[i];
   ULong wide = rexw ? 8 : opsize16 ? 2 : 4;
   switch (op) {
   case 0xa4: return 1;
   case 0xa5: return wide;
   case 0xaa: return 1 | (1 << 8);
   case 0xab: return wide | (1 << 8);
   default: return 0;
   }
}

/* ---- instrumentation ------------------------------------------------------------------- */

/* A guest register's value as an atom (helper arguments must be atoms). */
static IRExpr* guest64(IRSB* sb, Int offset)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Get(offset, Ity_I64)));
   return IRExpr_RdTmp(t);
}

static ULong pack_counts(ULong* nonmem, ULong* all)
{
   ULong c = *nonmem | (*all << 32);
   *nonmem = 0;
   *all = 0;
   return c;
}

static void add_counts(IRSB* sb, ULong* nonmem, ULong* all)
{
   if (*nonmem == 0 && *all == 0)
      return;
   ULong c = pack_counts(nonmem, all);
   IRTemp old = newIRTemp(sb->tyenv, Ity_I64);
   IRTemp sum = newIRTemp(sb->tyenv, Ity_I64);
   IRExpr* where = mkIRExpr_HWord((HWord)&g_counts);
   addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, where)));
   addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
                                                    IRExpr_Const(IRConst_U64(c)))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, where, IRExpr_RdTmp(sum)));
}

static void add_access(IRSB* sb, Bool store, IRExpr* addr, Int size, IRExpr* guard,
                       ULong* nonmem, ULong* all)
{
   ULong c = pack_counts(nonmem, all);
   IRDirty* d = store ? unsafeIRDirty_0_N(3, "bc_store", VG_(fnptr_to_fnentry)(bc_store),
                                          mkIRExprVec_3(addr, mkIRExpr_HWord(size),
                                                        mkIRExpr_HWord(c)))
                      : unsafeIRDirty_0_N(3, "bc_load", VG_(fnptr_to_fnentry)(bc_load),
                                          mkIRExprVec_3(addr, mkIRExpr_HWord(size),
                                                        mkIRExpr_HWord(c)));
   if (guard)
      d->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(d));
}

static Int load_g_size(IRLoadGOp cvt)
{
   switch (cvt) {
   case ILGop_IdentV128: return 16;
   case ILGop_Ident64: return 8;
   case ILGop_Ident32: return 4;
   case ILGop_16Uto32: case ILGop_16Sto32: return 2;
   default: return 1;
   }
}

static IRSB* bc_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout,
                           const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   IRSB* out = deepCopyIRSBExceptStmts(in);
   Int i = 0;
   for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
      addStmtToIRSB(out, in->stmts[i]);

   DiEpoch ep = VG_(current_DiEpoch)();
   ULong nonmem = 0, all = 0;
   Bool insn_open = False;      /* the current instruction is not yet counted as non-memory */
   Bool insn_has_access = False;
   Bool insn_is_rep = False;
   Addr last_ip = 0;

   for (; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      if (!st || st->tag == Ist_NoOp)
         continue;
      switch (st->tag) {
      case Ist_IMark: {
         if (insn_open && !insn_has_access)
            nonmem++;
         Addr ip = (Addr)st->Ist.IMark.addr;
         last_ip = ip;
         const HChar* name;
         if (VG_(get_fnname_if_entry)(ep, ip, &name)) {
            Int kind = bulk_kind_of(name);
            if (kind != BULK_NONE) {
               ULong c = pack_counts(&nonmem, &all);
               IRDirty* d = unsafeIRDirty_0_N(
                  0, "bc_bulk_enter", VG_(fnptr_to_fnentry)(bc_bulk_enter),
                  mkIRExprVec_6(mkIRExpr_HWord(kind),
                                guest64(out, offsetof(VexGuestAMD64State, guest_RDI)),
                                guest64(out, offsetof(VexGuestAMD64State, guest_RSI)),
                                guest64(out, offsetof(VexGuestAMD64State, guest_RDX)),
                                guest64(out, offsetof(VexGuestAMD64State, guest_RSP)),
                                mkIRExpr_HWord(c)));
               addStmtToIRSB(out, IRStmt_Dirty(d));
            }
         }
         addStmtToIRSB(out, st);
         ULong shape = rep_shape(ip, st->Ist.IMark.len);
         insn_is_rep = shape != 0;
         if (insn_is_rep) {
            add_counts(out, &nonmem, &all);
            IRTemp df = newIRTemp(out->tyenv, Ity_I64);
            addStmtToIRSB(out, IRStmt_WrTmp(df, guest64(out, offsetof(VexGuestAMD64State,
                                                                   guest_DFLAG))));
            /* guest_DFLAG is 1 or -1: bit 9 of the shape says "down". */
            IRTemp down = newIRTemp(out->tyenv, Ity_I64);
            addStmtToIRSB(out, IRStmt_WrTmp(down, IRExpr_Binop(Iop_And64, IRExpr_RdTmp(df),
                                                               IRExpr_Const(IRConst_U64(1ULL << 9)))));
            IRTemp full = newIRTemp(out->tyenv, Ity_I64);
            addStmtToIRSB(out, IRStmt_WrTmp(full, IRExpr_Binop(Iop_Or64, IRExpr_RdTmp(down),
                                                               IRExpr_Const(IRConst_U64(shape)))));
            IRDirty* d = unsafeIRDirty_0_N(
               0, "bc_rep", VG_(fnptr_to_fnentry)(bc_rep),
               mkIRExprVec_6(mkIRExpr_HWord(ip), IRExpr_RdTmp(full),
                             guest64(out, offsetof(VexGuestAMD64State, guest_RCX)),
                             guest64(out, offsetof(VexGuestAMD64State, guest_RSI)),
                             guest64(out, offsetof(VexGuestAMD64State, guest_RDI)),
                             guest64(out, offsetof(VexGuestAMD64State, guest_RAX))));
            addStmtToIRSB(out, IRStmt_Dirty(d));
         }
         all++;
         insn_open = True;
         insn_has_access = insn_is_rep; /* a rep's accesses are its bulk event */
         break;
      }
      case Ist_WrTmp: {
         IRExpr* e = st->Ist.WrTmp.data;
         if (e->tag == Iex_Load && !insn_is_rep) {
            insn_has_access = True;
            add_access(out, False, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), NULL,
                       &nonmem, &all);
         }
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_Store:
         if (!insn_is_rep) {
            insn_has_access = True;
            add_access(out, True, st->Ist.Store.addr,
                       sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data)), NULL,
                       &nonmem, &all);
         }
         addStmtToIRSB(out, st);
         break;
      case Ist_StoreG: {
         IRStoreG* sg = st->Ist.StoreG.details;
         if (!insn_is_rep) {
            insn_has_access = True;
            add_access(out, True, sg->addr, sizeofIRType(typeOfIRExpr(in->tyenv, sg->data)),
                       sg->guard, &nonmem, &all);
         }
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_LoadG: {
         IRLoadG* lg = st->Ist.LoadG.details;
         if (!insn_is_rep) {
            insn_has_access = True;
            add_access(out, False, lg->addr, load_g_size(lg->cvt), lg->guard, &nonmem, &all);
         }
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_Dirty: {
         IRDirty* d = st->Ist.Dirty.details;
         if (d->mFx != Ifx_None && !insn_is_rep) {
            insn_has_access = True;
            if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
               add_access(out, False, d->mAddr, d->mSize, NULL, &nonmem, &all);
            if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
               add_access(out, True, d->mAddr, d->mSize, NULL, &nonmem, &all);
         }
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_CAS: {
         IRCAS* cas = st->Ist.CAS.details;
         Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo));
         if (cas->dataHi)
            size *= 2;
         insn_has_access = True;
         add_access(out, False, cas->addr, size, NULL, &nonmem, &all);
         add_access(out, True, cas->addr, size, NULL, &nonmem, &all);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_LLSC: {
         IRType ty;
         Bool store = st->Ist.LLSC.storedata != NULL;
         ty = store ? typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata)
                    : typeOfIRTemp(in->tyenv, st->Ist.LLSC.result);
         insn_has_access = True;
         add_access(out, store, st->Ist.LLSC.addr, sizeofIRType(ty), NULL, &nonmem, &all);
         addStmtToIRSB(out, st);
         break;
      }
      case Ist_Exit:
         /* The instruction owning a side exit has run if the exit is taken. */
         if (insn_open && !insn_has_access)
            nonmem++;
         insn_open = False;
         add_counts(out, &nonmem, &all);
         addStmtToIRSB(out, st);
         break;
      default:
         addStmtToIRSB(out, st);
         break;
      }
   }
   if (insn_open && !insn_has_access)
      nonmem++;

   /* A return from inside a memcpy-family function may end its call. */
   const HChar* name;
   if (out->jumpkind == Ijk_Ret && last_ip && VG_(get_fnname)(ep, last_ip, &name) &&
       bulk_kind_of(name) != BULK_NONE) {
      ULong c = pack_counts(&nonmem, &all);
      IRDirty* d = unsafeIRDirty_0_N(
         2, "bc_bulk_leave", VG_(fnptr_to_fnentry)(bc_bulk_leave),
         mkIRExprVec_2(guest64(out, offsetof(VexGuestAMD64State, guest_RSP)), mkIRExpr_HWord(c)));
      addStmtToIRSB(out, IRStmt_Dirty(d));
   }
   add_counts(out, &nonmem, &all);
   return out;
}

/* ---- memory and process events ---------------------------------------------------------- */

/* The live stream of `tid`, its instruction counts brought up to date; NULL before the
   thread's initial mappings are written (what Valgrind sets up before the program runs is
   in those). */
static Stream* stream_of(ThreadId tid)
{
   if (tid == VG_INVALID_THREADID || tid >= n_slots || !streams[tid].live ||
       streams[tid].needs_resident)
      return NULL;
   if (tid == cur_tid)
      account(0);
   return &streams[tid];
}

static Addr page_down(Addr a) { return a & ~(PAGE - 1); }
static Addr page_up(Addr a) { return (a + PAGE - 1) & ~(PAGE - 1); }

static void bc_new_mem_brk(Addr a, SizeT len, ThreadId tid)
{
   Stream* s = stream_of(tid);
   if (s)
      put_range(s, 'A', a, len);
}

static void bc_die_mem_brk(Addr a, SizeT len)
{
   /* Only whole pages above the new break go: the page holding it stays. */
   Stream* s = stream_of(VG_(get_running_tid)());
   Addr start = page_up(a), end = a + len;
   if (s && end > start)
      put_range(s, 'U', start, end - start);
}

/* Kernel copies: what a system call reads from (G) or writes into (K) user memory. */
static Bool syscall_part(CorePart part)
{
   return part == Vg_CoreSysCall || part == Vg_CoreSysCallArgInMem;
}

static void bc_pre_mem_read(CorePart part, ThreadId tid, const HChar* what, Addr a, SizeT size)
{
   Stream* s = syscall_part(part) ? stream_of(tid) : NULL;
   if (s)
      put_range(s, 'G', a, size);
}

static void bc_pre_mem_read_asciiz(CorePart part, ThreadId tid, const HChar* what, Addr a)
{
   Stream* s = syscall_part(part) ? stream_of(tid) : NULL;
   if (s)
      put_range(s, 'G', a, VG_(strlen)((const HChar*)a) + 1);
}

static void bc_post_mem_write(CorePart part, ThreadId tid, Addr a, SizeT size)
{
   Stream* s = syscall_part(part) ? stream_of(tid) : NULL;
   if (s)
      put_range(s, 'K', a, size);
}

static void exec_file(HChar* path, Int pid)
{
   HChar name[64];
   VG_(sprintf)(name, "exec-%d", pid);
   path_of(path, name);
}

/* A copy the kernel made from one file to another (copy_file_range, sendfile, splice) of
   `n` bytes into `fd_out`: the kernel's copy loop, as loads of a source buffer (G) and stores
   to a destination buffer (K) of the kernel's own, a chunk at a time, each chunk's pages
   resident (N: the page cache holds them) and unmapped after (U: they are not the
   program's).  Into a pipe the kernel moves page references rather than bytes: no copy. */
static void put_file_copy(Stream* s, Int fd_out, ULong n)
{
   struct vg_stat st;
   if (n == 0 || (VG_(fstat)(fd_out, &st) == 0 && VKI_S_ISFIFO(st.mode)))
      return;
   s->file_copies++;
   s->file_copy_bytes += n;
   Addr src = KERNEL_BUFFERS + (Addr)s->id * 2 * KERNEL_CHUNK;
   Addr dst = src + KERNEL_CHUNK;
   for (ULong done = 0; done < n; done += KERNEL_CHUNK) {
      ULong c = n - done < KERNEL_CHUNK ? n - done : KERNEL_CHUNK;
      put_range(s, 'N', src, KERNEL_CHUNK);
      put_range(s, 'N', dst, KERNEL_CHUNK);
      put_range(s, 'G', src, c);
      put_range(s, 'K', dst, c);
      put_range(s, 'U', src, KERNEL_CHUNK);
      put_range(s, 'U', dst, KERNEL_CHUNK);
   }
}

static void bc_pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs)
{
   Stream* s = stream_of(tid);
   if (!s)
      return;
   switch (sysno) {
   case __NR_wait4:
      if (!(args[2] & VKI_WNOHANG))
         put0(s, 'W');
      break;
   case __NR_waitid:
      if (!(args[3] & VKI_WNOHANG))
         put0(s, 'W');
      break;
   case __NR_execve:
   case __NR_execveat: {
      /* The new program's instance continues this stream; every buffer and every count
         goes out now, as this process's memory is about to be replaced (the other threads
         end here).  The instructions so far go along, for the shared budget. */
      HChar path[4096], line[96];
      exec_file(path, VG_(getpid)());
      Int fd = open_or_die(path, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC);
      VG_(sprintf)(line, "%d %d %llu\n", s->id, next_id_hint, s->total);
      write_all(fd, line, VG_(strlen)(line), path);
      VG_(close)(fd);
      put_compute(s);
      for (Int t = 0; t < n_slots; t++)
         if (streams[t].live) {
            flush_stream(&streams[t]);
            write_counts(&streams[t]);
         }
      break;
   }
   default:
      break;
   }
}

static void bc_post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs, SysRes res)
{
   Stream* s = stream_of(tid);
   if (!s)
      return;
   Bool ok = !sr_isError(res);
   switch (sysno) {
   case __NR_mmap:
      if (ok) {
         if (args[3] & (VKI_MAP_FIXED | 0x100000 /* MAP_FIXED_NOREPLACE */))
            put_range(s, 'U', sr_Res(res), args[1]);
         put_range(s, 'A', sr_Res(res), args[1]);
      }
      break;
   case __NR_munmap:
      if (ok)
         put_range(s, 'U', args[0], args[1]);
      break;
   case __NR_mremap:
      if (ok) {
         put_range(s, 'U', args[0], args[1]);
         put_range(s, 'A', sr_Res(res), args[2]);
      }
      break;
   case __NR_madvise:
      if (ok && args[2] == 4 /* MADV_DONTNEED */) {
         Addr start = page_down(args[0]);
         ULong bytes = page_up(args[0] + args[1]) - start;
         put_range(s, 'U', start, bytes);
         put_range(s, 'A', start, bytes);
      }
      break;
   case __NR_copy_file_range: /* (fd_in, off_in, fd_out, off_out, len, flags) */
   case __NR_splice:          /* (fd_in, off_in, fd_out, off_out, len, flags) */
      if (ok)
         put_file_copy(s, (Int)args[2], sr_Res(res));
      break;
   case __NR_sendfile: /* (fd_out, fd_in, offset, count) */
      if (ok)
         put_file_copy(s, (Int)args[0], sr_Res(res));
      break;
   case __NR_execve:
   case __NR_execveat: {
      /* Only reached when the exec failed: this instance goes on. */
      HChar path[4096];
      exec_file(path, VG_(getpid)());
      VG_(unlink)(path);
      break;
   }
   case __NR_fork:
   case __NR_vfork:
   case __NR_clone:
      if (!ok && fork_child_id >= 0) {
         /* The fork's F is written: its child exits at once. */
         HChar line[128];
         ThreadId spare = 0;
         for (ThreadId t = 1; t < n_slots; t++)
            if (!streams[t].live && t != tid) {
               spare = t;
               break;
            }
         if (spare) {
            open_stream(spare, fork_child_id, True, False);
            VG_(sprintf)(line, "thread %d failed-fork %d %d 0\n", fork_child_id, s->id,
                         VG_(getpid)());
            index_line(line);
            finish_stream(&streams[spare]);
         }
      }
      fork_child_id = -1;
      break;
   default:
      break;
   }
}

static void bc_atfork_pre(ThreadId tid)
{
   Stream* s = stream_of(tid);
   if (!s)
      return;
   fork_child_id = alloc_id();
   put1(s, 'F', (ULong)fork_child_id);
   flush_stream(s);
}

static void bc_atfork_parent(ThreadId tid) {}

static void open_process_files(void)
{
   HChar path[4096];
   path_of(path, "index");
   index_fd = open_or_die(path, VKI_O_WRONLY | VKI_O_APPEND | VKI_O_CREAT);
   path_of(path, "budget");
   budget_fd = open_or_die(path, VKI_O_RDWR | VKI_O_CREAT);
}

/* In the new child process: only the forking thread lives on, in a stream of its own; the
   parent's threads' buffers are the parent's to write. */
static void bc_atfork_child(ThreadId tid)
{
   Stream* parent = &streams[tid];
   Int parent_id = parent->id;
   for (Int t = 0; t < n_slots; t++) {
      if (streams[t].live) {
         VG_(close)(streams[t].fd);
         streams[t].used = 0;
         streams[t].live = False;
      }
   }
   VG_(close)(index_fd);
   VG_(close)(budget_fd);
   open_process_files();
   if (fork_child_id < 0)
      return;
   open_stream(tid, fork_child_id, True, False);
   HChar line[128];
   VG_(sprintf)(line, "thread %d fork %d %d %u\n", fork_child_id, parent_id, VG_(getpid)(), tid);
   index_line(line);
   fork_child_id = -1;
   cur = &streams[tid];
   cur_tid = tid;
}

static void bc_pre_thread_ll_create(ThreadId parent, ThreadId child)
{
   Stream* s = stream_of(parent);
   if (!s || child >= n_slots)
      return;
   Int id = alloc_id();
   put1(s, 'T', (ULong)id);
   Int parent_id = s->id;
   open_stream(child, id, True, False);
   HChar line[128];
   VG_(sprintf)(line, "thread %d spawn %d %d %u\n", id, parent_id, VG_(getpid)(), child);
   index_line(line);
}

static void bc_pre_thread_ll_exit(ThreadId tid)
{
   Stream* s = stream_of(tid);
   if (s)
      finish_stream(s);
   if (tid == cur_tid)
      cur = NULL;
}

/* ---- start and end ---------------------------------------------------------------------- */

static void bc_post_clo_init(void)
{
   if (!clo_out)
      die("--capture-out=DIR is required", NULL);
   if (clo_max) {
      HChar* end;
      max_instructions = VG_(strtoull10)(clo_max, &end);
      if (*end != 0)
         die("--capture-max-instructions expects a number, got", clo_max);
   }
   n_slots = VG_N_THREADS;
   streams = VG_(calloc)("bulkcap.streams", n_slots, sizeof(Stream));
   open_process_files();
   VG_(atfork)(bc_atfork_pre, bc_atfork_parent, bc_atfork_child);

   ThreadId tid = 1; /* the initial thread */
   HChar path[4096];
   exec_file(path, VG_(getpid)());
   SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
   if (!sr_isError(r)) {
      /* After an exec: this process's stream goes on with E and the new image. */
      Int fd = (Int)sr_Res(r);
      HChar text[64];
      Int n = VG_(read)(fd, text, sizeof text - 1);
      VG_(close)(fd);
      VG_(unlink)(path);
      text[n > 0 ? n : 0] = 0;
      HChar* p;
      Int id = (Int)VG_(strtoll10)(text, &p);
      next_id_hint = (Int)VG_(strtoll10)(p, &p);
      ULong before = VG_(strtoull10)(p, &p);
      open_stream(tid, id, False, True);
      /* The instructions before the exec are in the index already; they still count
         towards the budget. */
      streams[tid].total = streams[tid].reported = before;
      streams[tid].budget_seen = before >> BUDGET_STRIDE_BITS;
      put0(&streams[tid], 'E');
      HChar line[128];
      VG_(sprintf)(line, "exec %d %d\n", id, VG_(getpid)());
      index_line(line);
   } else {
      Int id = alloc_id();
      open_stream(tid, id, id != 0, False);
      HChar line[128];
      VG_(sprintf)(line, "thread %d main -1 %d %u\n", id, VG_(getpid)(), tid);
      index_line(line);
   }
   streams[tid].needs_resident = True;
}

static void bc_fini(Int exitcode)
{
   account(0);
   for (Int t = 0; t < n_slots; t++)
      finish_stream(&streams[t]);
}

static void bc_pre_clo_init(void)
{
   VG_(details_name)("bulkcap");
   VG_(details_version)("1");
   VG_(details_description)("bulksim workload capture");
   VG_(details_copyright_author)("Copyright (C) 2024 the bulksim authors; GPL-2.0-or-later.");
   VG_(details_bug_reports_to)("the bulksim issue tracker");
   VG_(basic_tool_funcs)(bc_post_clo_init, bc_instrument, bc_fini);
   VG_(needs_command_line_options)(bc_process_cmd_line_option, bc_print_usage,
                                   bc_print_debug_usage);
   VG_(needs_syscall_wrapper)(bc_pre_syscall, bc_post_syscall);
   VG_(track_start_client_code)(bc_start_client_code);
   VG_(track_stop_client_code)(bc_stop_client_code);
   VG_(track_new_mem_brk)(bc_new_mem_brk);
   VG_(track_die_mem_brk)(bc_die_mem_brk);
   VG_(track_pre_mem_read)(bc_pre_mem_read);
   VG_(track_pre_mem_read_asciiz)(bc_pre_mem_read_asciiz);
   VG_(track_post_mem_write)(bc_post_mem_write);
   VG_(track_pre_thread_ll_create)(bc_pre_thread_ll_create);
   VG_(track_pre_thread_ll_exit)(bc_pre_thread_ll_exit);
}

VG_DETERMINE_INTERFACE_VERSION(bc_pre_clo_init)
