/* One kernel node: squares each CE's value into the result array at its index. */
typedef struct {
  uint value;
} Number;

typedef struct {
  __global uint* squares;
} SquareArgs;

void square_body(__global const Number* n, chanflow_ctx* ctx) {
  CHANFLOW_ARGS(ctx, SquareArgs)->squares[n->value] = n->value * n->value;
}
CHANFLOW_KERNEL_NODE(square, Number, square_body)
