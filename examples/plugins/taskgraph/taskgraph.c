/* taskgraph: a pypto backend plugin, in C, that runs no kernels and draws the task graph instead.
 *
 * It serves one platform, "taskgraph", a simulator-kind platform (it runs here, needs no device)
 * lowering for the Ascend910B SoC. Compiling a program for it (RunConfig(platform="taskgraph")) writes
 * into the build directory:
 *   taskgraph.dot         the tasks, their kernels and tensor regions, and the dependencies (Graphviz)
 *   taskgraph.trace.json  the same graph as a Chrome / Perfetto trace: each task one slice, placed
 *                         as early as its dependencies allow, one unit of time each; arrows for edges
 * Running it runs nothing: outputs keep what they held (pypto reports them unwritten).
 *
 * Dependencies are drawn as the runtime derives them: a task waits for every earlier task whose
 * tensor region overlaps one of its own on the same tensor where either of them writes, and for the
 * tasks it names in deps=[...] (dashed). Tasks inside a pl.manual_scope get only the named ones.
 * Overlap is judged on element ranges [start, start + extent), so strided views that interleave are
 * taken to overlap.
 *
 * Everything it knows comes through the C ABI: pypto_rt_plan_describe (pypto-c/plan.h). */
#include <pypto-c/backend_plugin.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------------------------- */

static pypto_status fail(pypto_status status, const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  pypto_set_last_error_message(message);
  return status;
}

/* ---- dependencies ---------------------------------------------------------------------------- */

enum { EDGE_DATA = 1, EDGE_EXPLICIT = 2 };

static int writes(uint32_t direction) {
  return direction == PYPTO_ARG_OUTPUT || direction == PYPTO_ARG_INOUT || direction == PYPTO_ARG_OUTPUT_EXISTING;
}

static int reads(uint32_t direction) { return direction == PYPTO_ARG_INPUT || direction == PYPTO_ARG_INOUT; }

static int orders(const pypto_plan_arg* arg) {
  return arg->direction != PYPTO_ARG_SCALAR && arg->direction != PYPTO_ARG_NODEP && arg->region.extent > 0;
}

static int overlap(const pypto_plan_region* a, const pypto_plan_region* b) {
  return a->root == b->root && a->start < b->start + b->extent && b->start < a->start + a->extent;
}

/* Whether `later` must wait for `earlier` through their tensors: the same elements, one writes. */
static int data_dependent(const pypto_plan_task* earlier, const pypto_plan_task* later) {
  for (size_t i = 0; i < later->num_args; ++i) {
    const pypto_plan_arg* mine = &later->args[i];
    if (!orders(mine)) continue;
    for (size_t j = 0; j < earlier->num_args; ++j) {
      const pypto_plan_arg* theirs = &earlier->args[j];
      if (!orders(theirs) || !overlap(&mine->region, &theirs->region)) continue;
      if ((reads(mine->direction) && writes(theirs->direction)) || writes(mine->direction)) return 1;
    }
  }
  return 0;
}

/* Which tasks run inside a pl.manual_scope, from the scopes each task opens and closes. */
static unsigned char* manual_tasks(const pypto_plan_desc* plan) {
  size_t opened = 0;
  for (size_t t = 0; t < plan->num_tasks; ++t) opened += plan->tasks[t].scopes_opened;
  unsigned char* manual = calloc(plan->num_tasks + 1, 1);
  unsigned char* stack = calloc(opened + 1, 1); /* the open scopes' kinds (1: manual), innermost last */
  size_t depth = 0, manual_depth = 0;
  if (!manual || !stack) {
    free(manual);
    free(stack);
    return NULL;
  }
  for (size_t t = 0; t < plan->num_tasks; ++t) {
    const pypto_plan_task* task = &plan->tasks[t];
    for (uint16_t s = 0; s < task->scopes_opened; ++s) {
      const unsigned char is_manual = task->manual_scope && s + 1 == task->scopes_opened;
      stack[depth++] = is_manual;
      manual_depth += is_manual;
    }
    manual[t] = manual_depth > 0;
    for (uint16_t s = 0; s < task->scopes_closed && depth > 0; ++s) manual_depth -= stack[--depth];
  }
  free(stack);
  return manual;
}

/* edges[i * n + j]: how task j depends on task i (EDGE_* bits), for i < j. */
static unsigned char* dependencies(const pypto_plan_desc* plan) {
  const size_t n = plan->num_tasks;
  unsigned char* edges = calloc(n * n + 1, 1);
  unsigned char* manual = manual_tasks(plan);
  if (!edges || !manual) {
    free(edges);
    free(manual);
    return NULL;
  }
  for (size_t j = 0; j < n; ++j) {
    for (size_t d = 0; d < plan->tasks[j].num_deps; ++d)
      if (plan->tasks[j].deps[d] < j) edges[plan->tasks[j].deps[d] * n + j] |= EDGE_EXPLICIT;
    if (manual[j]) continue;
    for (size_t i = 0; i < j; ++i)
      if (!manual[i] && data_dependent(&plan->tasks[i], &plan->tasks[j])) edges[i * n + j] |= EDGE_DATA;
  }
  free(manual);
  return edges;
}

/* ---- names ----------------------------------------------------------------------------------- */

static const char* kernel_name(const pypto_plan_desc* plan, int32_t func_id) {
  for (size_t k = 0; k < plan->num_kernels; ++k)
    if (plan->kernels[k].func_id == func_id) return plan->kernels[k].name;
  return "?";
}

static const char* direction_name(uint32_t direction) {
  static const char* const names[] = {"in", "out", "inout", "out", "nodep", "scalar"};
  return direction < sizeof names / sizeof names[0] ? names[direction] : "?";
}

static const char* core_name(uint32_t core_type) { return core_type == PYPTO_CORE_AIC ? "AIC" : "AIV"; }

/* The task's kernels, "k" or "aic_k + aiv_k", or "(dependency only)". */
static void task_title(const pypto_plan_desc* plan, const pypto_plan_task* task, char* out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  if (task->num_kernels == 0) snprintf(out, size, "(dependency only)");
  for (size_t k = 0; k < task->num_kernels && used < size; ++k)
    used += (size_t)snprintf(out + used, size - used, "%s%s", k ? " + " : "",
                             kernel_name(plan, task->kernels[k].func_id));
}

/* JSON and DOT strings: quotes and backslashes escaped, control characters dropped. */
static void put_escaped(FILE* out, const char* text) {
  for (; *text; ++text) {
    if (*text == '"' || *text == '\\') fputc('\\', out);
    if ((unsigned char)*text >= 0x20) fputc(*text, out);
  }
}

/* "x[0,+512)" and its direction: where an argument lies on its tensor, in elements. */
static void put_region(FILE* out, const pypto_plan_desc* plan, const pypto_plan_arg* arg) {
  fprintf(out, "%s ", direction_name(arg->direction));
  put_escaped(out, plan->tensors[arg->region.root].name);
  if (strcmp(arg->tensor, plan->tensors[arg->region.root].name) != 0) {
    fputs(" (", out);
    put_escaped(out, arg->tensor);
    fputc(')', out);
  }
  fprintf(out, "[%llu,+%llu)", (unsigned long long)arg->region.start, (unsigned long long)arg->region.extent);
}

/* ---- Graphviz -------------------------------------------------------------------------------- */

static void write_dot(FILE* out, const pypto_plan_desc* plan, const unsigned char* edges) {
  const size_t n = plan->num_tasks;
  char title[512];
  fputs("digraph \"", out);
  put_escaped(out, plan->orchestration);
  fputs("\" {\n  node [shape=box, fontname=\"monospace\"];\n", out);
  for (size_t t = 0; t < n; ++t) {
    const pypto_plan_task* task = &plan->tasks[t];
    task_title(plan, task, title, sizeof title);
    fprintf(out, "  t%zu [label=\"t%zu: ", t, t);
    put_escaped(out, title);
    for (size_t k = 0; k < task->num_kernels; ++k) fprintf(out, "%s%s", k ? "+" : " (", core_name(task->kernels[k].core_type));
    if (task->num_kernels) fputc(')', out);
    if (task->block_num > 1) fprintf(out, " x%d blocks", task->block_num);
    for (size_t a = 0; a < task->num_args; ++a) {
      if (task->args[a].direction == PYPTO_ARG_SCALAR) continue;
      fputs("\\n", out);
      put_region(out, plan, &task->args[a]);
    }
    fputs("\"];\n", out);
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const unsigned char edge = edges[i * n + j];
      if (!edge) continue;
      fprintf(out, "  t%zu -> t%zu%s;\n", i, j, edge == EDGE_EXPLICIT ? " [style=dashed]" : "");
    }
  fputs("}\n", out);
}

/* ---- Chrome / Perfetto trace ----------------------------------------------------------------- */

static void write_trace(FILE* out, const pypto_plan_desc* plan, const unsigned char* edges) {
  enum { UNIT_US = 10 };
  const size_t n = plan->num_tasks;
  size_t* level = calloc(n + 1, sizeof *level);
  size_t* lane = calloc(n + 1, sizeof *lane);
  size_t* lanes_used = calloc(n + 1, sizeof *lanes_used);
  char title[512];
  int first = 1;
  if (!level || !lane || !lanes_used) goto done;
  /* Each task one unit after the latest of what it waits for; tasks of one level side by side. */
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < j; ++i)
      if (edges[i * n + j] && level[i] + 1 > level[j]) level[j] = level[i] + 1;
    lane[j] = lanes_used[level[j]]++;
  }
  fputs("{\"displayTimeUnit\": \"us\", \"traceEvents\": [\n", out);
  for (size_t t = 0; t < n; ++t) {
    const pypto_plan_task* task = &plan->tasks[t];
    task_title(plan, task, title, sizeof title);
    fprintf(out, "%s  {\"name\": \"", first ? "" : ",\n");
    first = 0;
    put_escaped(out, title);
    fprintf(out, "\", \"cat\": \"task\", \"ph\": \"X\", \"pid\": 1, \"tid\": %zu, \"ts\": %zu, \"dur\": %d, "
                 "\"args\": {\"task\": %zu, \"regions\": [",
            lane[t], level[t] * UNIT_US, UNIT_US, t);
    int first_arg = 1;
    for (size_t a = 0; a < task->num_args; ++a) {
      if (task->args[a].direction == PYPTO_ARG_SCALAR) continue;
      fputs(first_arg ? "\"" : ", \"", out);
      first_arg = 0;
      put_region(out, plan, &task->args[a]);
      fputc('"', out);
    }
    fputs("]}}", out);
  }
  /* Flow arrows, one per dependency: from the end of the earlier task to the start of the later. */
  size_t flow = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      if (!edges[i * n + j]) continue;
      fprintf(out, ",\n  {\"name\": \"dep\", \"cat\": \"dep\", \"ph\": \"s\", \"id\": %zu, \"pid\": 1, \"tid\": %zu, "
                   "\"ts\": %zu}",
              flow, lane[i], level[i] * UNIT_US + UNIT_US - 1);
      fprintf(out, ",\n  {\"name\": \"dep\", \"cat\": \"dep\", \"ph\": \"f\", \"bp\": \"e\", \"id\": %zu, \"pid\": 1, "
                   "\"tid\": %zu, \"ts\": %zu}",
              flow, lane[j], level[j] * UNIT_US);
      ++flow;
    }
  fputs("\n]}\n", out);
done:
  free(level);
  free(lane);
  free(lanes_used);
}

/* ---- the plugin ------------------------------------------------------------------------------ */

typedef void (*writer_fn)(FILE*, const pypto_plan_desc*, const unsigned char*);

static pypto_status write_file(const char* dir, const char* name, writer_fn writer, const pypto_plan_desc* plan,
                               const unsigned char* edges) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* out = fopen(path, "w");
  if (!out) return fail(PYPTO_ERR_RUNTIME, "taskgraph: cannot write %s", path);
  writer(out, plan, edges);
  if (fclose(out) != 0) return fail(PYPTO_ERR_RUNTIME, "taskgraph: cannot write %s", path);
  return PYPTO_OK;
}

static pypto_status check_platform(const char* platform) {
  if (!platform || strcmp(platform, "taskgraph") != 0)
    return fail(PYPTO_ERR_NOT_FOUND, "taskgraph: unknown platform '%s' (this plugin serves taskgraph)",
                platform ? platform : "");
  return PYPTO_OK;
}

static pypto_status prepare(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                            const char* output_dir) {
  pypto_plan_desc* desc = NULL;
  unsigned char* edges = NULL;
  pypto_status status = check_platform(platform);
  (void)lowered;
  if (status != PYPTO_OK) return status;
  if (!plan || !output_dir) return fail(PYPTO_ERR_INVALID_ARGUMENT, "taskgraph prepare: null plan or output directory");
  if ((status = pypto_rt_plan_describe(plan, &desc)) != PYPTO_OK) return status; /* its message stands */
  edges = dependencies(desc);
  if (!edges) status = fail(PYPTO_ERR_RUNTIME, "taskgraph: out of memory");
  if (status == PYPTO_OK) status = write_file(output_dir, "taskgraph.dot", write_dot, desc, edges);
  if (status == PYPTO_OK) status = write_file(output_dir, "taskgraph.trace.json", write_trace, desc, edges);
  free(edges);
  pypto_rt_plan_desc_free(desc);
  return status;
}

/* Runs nothing: the graph was written when the program was compiled. */
static pypto_status execute(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                            const pypto_chip_tensor* params, size_t num_params) {
  (void)lowered;
  (void)plan;
  (void)params;
  (void)num_params;
  return check_platform(platform);
}

static const pypto_platform_desc platforms[] = {
    {.name = "taskgraph",
     .kind = PYPTO_PLATFORM_SIMULATOR,
     .simulates = NULL,
     .soc = {.table = "Ascend910B"},
     .pto_modules = PYPTO_PTO_NONE,
     .toolchain = NULL},
};

static const pypto_backend_plugin plugin = {
    .abi_version = PYPTO_BACKEND_PLUGIN_ABI_VERSION,
    .name = "taskgraph",
    .description = "draws the task graph (Graphviz DOT, Chrome trace) into the build directory; runs no kernels",
    .platforms = platforms,
    .num_platforms = sizeof platforms / sizeof platforms[0],
    .prepare = prepare,
    .execute = execute,
    .open_session = NULL,
    .run_session = NULL,
    .close_session = NULL,
    .run_session_plan = NULL,
};

__attribute__((visibility("default"))) const pypto_backend_plugin* pypto_backend_plugin_v4(void) { return &plugin; }
