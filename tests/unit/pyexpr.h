/* pyexpr.h - the part of Python's expression language that Kernel Tuner
 * restriction strings are written in (kernels/family.h: kt_restrictions,
 * kt_block_x), evaluated as Python does, for the unit tests that check
 * those strings against the planner's rules without Python.
 *
 * Integers only: literals, names (looked up in a table: an unknown name is
 * an error, as Python's NameError), unary + and -, + - * // % (floor
 * division and modulo as Python's: -7 // 2 is -4, -7 % 2 is 1; by zero an
 * error), comparisons < <= > >= == != chained as Python chains them
 * (a < b < c is a < b and b < c), `x in (a, b, ...)` and `not in`, `not`,
 * `and` and `or` (returning an operand, as Python's), `x if c else y`,
 * and parentheses. Anything else is a parse error: the test fails rather
 * than guess. Parse once (pe_parse), evaluate many times (pe_eval).
 */
#ifndef PYEXPR_H
#define PYEXPR_H

#include <ctype.h>
#include <string.h>

#define PE_MAX_NODES 256
#define PE_MAX_NAMES 8

typedef enum pe_op {
    PE_NUM,
    PE_NAME,
    PE_NEG,
    PE_ADD,
    PE_SUB,
    PE_MUL,
    PE_FLOORDIV,
    PE_MOD,
    PE_CMP, /* a chain: kid[0] op[0] kid[1] op[1] kid[2] ... (ops in cmp[]) */
    PE_NOT,
    PE_AND,
    PE_OR,
    PE_IFELSE, /* kid[0] if kid[1] else kid[2] */
    PE_TUPLE
} pe_op;

typedef enum pe_cmp { PE_LT, PE_LE, PE_GT, PE_GE, PE_EQ, PE_NE, PE_IN, PE_NOTIN } pe_cmp;

#define PE_MAX_KIDS 12

typedef struct pe_node {
    pe_op op;
    long long num;                /* PE_NUM */
    int name;                     /* PE_NAME: index into the names */
    int n_kids, kid[PE_MAX_KIDS]; /* operands, tuple items, chain operands */
    pe_cmp cmp[PE_MAX_KIDS];      /* PE_CMP: the operators between kids */
} pe_node;

typedef struct pe_expr {
    pe_node node[PE_MAX_NODES];
    int n, root;
    const char *const *names; /* the names a value may be given for */
    int n_names;
    const char *s, *p; /* the text, and where parsing is */
    int err;           /* 1: did not parse (or a node table overflow) */
} pe_expr;

static inline void pe_space(pe_expr *e)
{
    while (*e->p == ' ')
        e->p++;
}

/* Whether the next token is the word or symbol w (a word must end there). */
static inline int pe_peek(pe_expr *e, const char *w)
{
    pe_space(e);
    const size_t n = strlen(w);
    if (strncmp(e->p, w, n) != 0)
        return 0;
    if (isalpha((unsigned char)w[0]) && (isalnum((unsigned char)e->p[n]) || e->p[n] == '_'))
        return 0;
    return 1;
}

static inline int pe_take(pe_expr *e, const char *w)
{
    if (!pe_peek(e, w))
        return 0;
    e->p += strlen(w);
    return 1;
}

static inline int pe_new(pe_expr *e, pe_op op)
{
    if (e->n == PE_MAX_NODES) {
        e->err = 1;
        return 0;
    }
    memset(&e->node[e->n], 0, sizeof e->node[e->n]);
    e->node[e->n].op = op;
    return e->n++;
}

/* A node of one operand a: the prefix operators (-x, not x). */
static inline int pe_un(pe_expr *e, pe_op op, int a)
{
    const int k = pe_new(e, op);
    e->node[k].n_kids = 1;
    e->node[k].kid[0] = a;
    return k;
}

static inline int pe_bin(pe_expr *e, pe_op op, int a, int b)
{
    const int k = pe_new(e, op);
    e->node[k].n_kids = 2;
    e->node[k].kid[0] = a;
    e->node[k].kid[1] = b;
    return k;
}

static int pe_cond(pe_expr *e);

static inline int pe_atom(pe_expr *e)
{
    pe_space(e);
    if (isdigit((unsigned char)*e->p)) {
        const int k = pe_new(e, PE_NUM);
        long long v = 0;
        while (isdigit((unsigned char)*e->p))
            v = v * 10 + (*e->p++ - '0');
        e->node[k].num = v;
        return k;
    }
    if (isalpha((unsigned char)*e->p) || *e->p == '_') {
        const char *start = e->p;
        while (isalnum((unsigned char)*e->p) || *e->p == '_')
            e->p++;
        const size_t len = (size_t)(e->p - start);
        for (int i = 0; i < e->n_names; i++)
            if (strlen(e->names[i]) == len && strncmp(e->names[i], start, len) == 0) {
                const int k = pe_new(e, PE_NAME);
                e->node[k].name = i;
                return k;
            }
        e->err = 1; /* NameError */
        return 0;
    }
    if (pe_take(e, "(")) {
        const int first = pe_cond(e);
        if (pe_take(e, ")"))
            return first;
        const int k = pe_new(e, PE_TUPLE);
        e->node[k].kid[e->node[k].n_kids++] = first;
        while (!e->err && pe_take(e, ",")) {
            if (pe_peek(e, ")"))
                break;
            if (e->node[k].n_kids == PE_MAX_KIDS) {
                e->err = 1;
                break;
            }
            const int item = pe_cond(e);
            e->node[k].kid[e->node[k].n_kids++] = item;
        }
        if (!pe_take(e, ")"))
            e->err = 1;
        return k;
    }
    e->err = 1;
    return 0;
}

static inline int pe_unary(pe_expr *e)
{
    if (pe_take(e, "-"))
        return pe_un(e, PE_NEG, pe_unary(e));
    if (pe_take(e, "+"))
        return pe_unary(e);
    return pe_atom(e);
}

/* An operator of a binary level and the node it makes. */
typedef struct {
    const char *w;
    pe_op op;
} pe_binop;

/* One level of left-associative binary operators: operand (op operand)*,
 * each op the first of ops[0..n) that the text starts with (so a longer
 * spelling goes before its prefix: "//" before "/"). */
static inline int pe_left(pe_expr *e, int (*operand)(pe_expr *), const pe_binop *ops, int n)
{
    int a = operand(e);
    for (;;) {
        int i = 0;
        while (i < n && !pe_take(e, ops[i].w))
            i++;
        if (i == n)
            return a;
        a = pe_bin(e, ops[i].op, a, operand(e));
    }
}

static inline int pe_term(pe_expr *e)
{
    static const pe_binop ops[] = {{"//", PE_FLOORDIV}, {"*", PE_MUL}, {"%", PE_MOD}};
    const int a = pe_left(e, pe_unary, ops, 3);
    if (pe_peek(e, "/")) /* true division: not in this subset */
        e->err = 1;
    return a;
}

static inline int pe_arith(pe_expr *e)
{
    static const pe_binop ops[] = {{"+", PE_ADD}, {"-", PE_SUB}};
    return pe_left(e, pe_term, ops, 2);
}

static inline int pe_cmp_op(pe_expr *e, pe_cmp *op)
{
    static const struct {
        const char *w;
        pe_cmp op;
    } ops[] = {{"<=", PE_LE}, {">=", PE_GE}, {"==", PE_EQ}, {"!=", PE_NE},
               {"<", PE_LT},  {">", PE_GT},  {"in", PE_IN}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (pe_take(e, ops[i].w)) {
            *op = ops[i].op;
            return 1;
        }
    const char *save = e->p;
    if (pe_take(e, "not") && pe_take(e, "in")) {
        *op = PE_NOTIN;
        return 1;
    }
    e->p = save;
    return 0;
}

static inline int pe_comp(pe_expr *e)
{
    const int first = pe_arith(e);
    pe_cmp op;
    if (!pe_cmp_op(e, &op))
        return first;
    const int k = pe_new(e, PE_CMP);
    e->node[k].kid[e->node[k].n_kids++] = first;
    do {
        if (e->node[k].n_kids == PE_MAX_KIDS) {
            e->err = 1;
            break;
        }
        e->node[k].cmp[e->node[k].n_kids - 1] = op;
        const int b = pe_arith(e);
        e->node[k].kid[e->node[k].n_kids++] = b;
    } while (!e->err && pe_cmp_op(e, &op));
    return k;
}

static inline int pe_not(pe_expr *e)
{
    if (pe_take(e, "not"))
        return pe_un(e, PE_NOT, pe_not(e));
    return pe_comp(e);
}

static inline int pe_and(pe_expr *e)
{
    static const pe_binop ops[] = {{"and", PE_AND}};
    return pe_left(e, pe_not, ops, 1);
}

static inline int pe_or(pe_expr *e)
{
    static const pe_binop ops[] = {{"or", PE_OR}};
    return pe_left(e, pe_and, ops, 1);
}

static int pe_cond(pe_expr *e)
{
    const int a = pe_or(e);
    if (!pe_take(e, "if"))
        return a;
    const int c = pe_or(e);
    if (!pe_take(e, "else")) {
        e->err = 1;
        return a;
    }
    const int b = pe_cond(e);
    const int k = pe_new(e, PE_IFELSE);
    e->node[k].n_kids = 3;
    e->node[k].kid[0] = a;
    e->node[k].kid[1] = c;
    e->node[k].kid[2] = b;
    return k;
}

/* Parses text over the names (n of them). 0, or -1 when it is not an
 * expression of this subset over those names. */
static inline int pe_parse(pe_expr *e, const char *text, const char *const *names, int n)
{
    memset(e, 0, sizeof *e);
    e->names = names;
    e->n_names = n;
    e->s = e->p = text;
    e->root = pe_cond(e);
    pe_space(e);
    if (*e->p != '\0')
        e->err = 1;
    return e->err ? -1 : 0;
}

/* Python's floor division and modulo. */
static inline long long pe_floordiv(long long a, long long b)
{
    long long q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static inline long long pe_node_eval(const pe_expr *e, int k, const long long *vals, int *err)
{
    const pe_node *n = &e->node[k];
    long long a, b;
    switch (n->op) {
    case PE_NUM:
        return n->num;
    case PE_NAME:
        return vals[n->name];
    case PE_NEG:
        return -pe_node_eval(e, n->kid[0], vals, err);
    case PE_NOT:
        return !pe_node_eval(e, n->kid[0], vals, err);
    case PE_AND:
        a = pe_node_eval(e, n->kid[0], vals, err);
        return a ? pe_node_eval(e, n->kid[1], vals, err) : a;
    case PE_OR:
        a = pe_node_eval(e, n->kid[0], vals, err);
        return a ? a : pe_node_eval(e, n->kid[1], vals, err);
    case PE_IFELSE:
        return pe_node_eval(e, n->kid[1], vals, err) ? pe_node_eval(e, n->kid[0], vals, err)
                                                     : pe_node_eval(e, n->kid[2], vals, err);
    case PE_TUPLE:
        *err = 1; /* a tuple is only the right side of `in` */
        return 0;
    case PE_CMP: {
        long long left = pe_node_eval(e, n->kid[0], vals, err);
        for (int i = 1; i < n->n_kids; i++) {
            const pe_node *r = &e->node[n->kid[i]];
            int ok;
            if (n->cmp[i - 1] == PE_IN || n->cmp[i - 1] == PE_NOTIN) {
                if (r->op != PE_TUPLE) {
                    *err = 1;
                    return 0;
                }
                ok = 0;
                for (int j = 0; j < r->n_kids && !ok; j++)
                    ok = pe_node_eval(e, r->kid[j], vals, err) == left;
                if (n->cmp[i - 1] == PE_NOTIN)
                    ok = !ok;
                if (!ok)
                    return 0;
                continue; /* a tuple ends nothing else here: our strings never chain it */
            }
            const long long right = pe_node_eval(e, n->kid[i], vals, err);
            switch (n->cmp[i - 1]) {
            case PE_LT:
                ok = left < right;
                break;
            case PE_LE:
                ok = left <= right;
                break;
            case PE_GT:
                ok = left > right;
                break;
            case PE_GE:
                ok = left >= right;
                break;
            case PE_EQ:
                ok = left == right;
                break;
            default:
                ok = left != right;
                break;
            }
            if (!ok)
                return 0;
            left = right;
        }
        return 1;
    }
    default:
        break;
    }
    a = pe_node_eval(e, n->kid[0], vals, err);
    b = pe_node_eval(e, n->kid[1], vals, err);
    switch (n->op) {
    case PE_ADD:
        return a + b;
    case PE_SUB:
        return a - b;
    case PE_MUL:
        return a * b;
    case PE_FLOORDIV:
    case PE_MOD:
        if (b == 0) { /* ZeroDivisionError */
            *err = 1;
            return 0;
        }
        return n->op == PE_FLOORDIV ? pe_floordiv(a, b) : a - b * pe_floordiv(a, b);
    default:
        *err = 1;
        return 0;
    }
}

/* The value of a parsed expression with vals[i] for names[i]; *err set
 * (never cleared) on a division by zero or a misused tuple. */
static inline long long pe_eval(const pe_expr *e, const long long *vals, int *err)
{
    return pe_node_eval(e, e->root, vals, err);
}

#endif /* PYEXPR_H */
