/**
 * Attention-only ONNX models, written here byte by byte (ONNX files are protocol buffers), so that ONNX Runtime's
 * WebGPU flash attention can be timed on the bench's own problems with nothing but its runtime installed.
 *
 * ONNX Runtime reaches its WebGPU FlashAttention program through two `com.microsoft` operators: GroupQueryAttention
 * (always causal, aligned bottom-right, grouped KV heads) and MultiHeadAttention (no mask). Both take [B, L, H·d]
 * tensors. A model chains `nodes` attention nodes, node n's query being node n − 1's output and K, V shared, so that
 * (time of R nodes − time of 1) / (R − 1) is the kernel's time without the uploads and readback of one run.
 */

/** A problem ONNX Runtime's operators can express. */
export interface OnnxAttention {
  readonly B: number;
  readonly Hq: number;
  readonly Hkv: number;
  readonly L: number;
  readonly d: number;
  readonly causal: boolean;
  readonly dtype: 'f32' | 'f16';
}

/** Why ONNX Runtime's attention operators cannot express this problem, or undefined. */
export function onnxUnsupported(p: OnnxAttention): string | undefined {
  if (!p.causal && p.Hq !== p.Hkv) return 'MultiHeadAttention (unmasked) has no grouped KV heads';
  return undefined;
}

// Protocol buffer wire format: varints, and length-delimited fields (strings, bytes, nested messages).
const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_BYTES = 2;

function varint(value: number): number[] {
  const out: number[] = [];
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n;
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
}

const key = (field: number, wire: number): number[] => varint((field << 3) | wire);
const intField = (field: number, value: number): number[] => [...key(field, WIRE_VARINT), ...varint(value)];
const bytesField = (field: number, bytes: readonly number[] | Uint8Array): number[] => [...key(field, WIRE_BYTES), ...varint(bytes.length), ...bytes];
const stringField = (field: number, text: string): number[] => bytesField(field, new TextEncoder().encode(text));
function floatField(field: number, value: number): number[] {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setFloat32(0, value, true);
  return [...key(field, WIRE_FIXED32), ...bytes];
}

/** ONNX's TensorProto.DataType values. */
const ELEM = { f32: 1, i32: 6, f16: 10 } as const;

// TypeProto.Tensor { elem_type = 1; shape = 2 { dim = 1 { dim_value = 1 } } }
function tensorType(elem: number, dims: readonly number[]): number[] {
  const shape = dims.flatMap((n) => bytesField(1, intField(1, n)));
  return bytesField(1, [...intField(1, elem), ...bytesField(2, shape)]);
}
// ValueInfoProto { name = 1; type = 2 }
const valueInfo = (name: string, elem: number, dims: readonly number[]): number[] => [...stringField(1, name), ...bytesField(2, tensorType(elem, dims))];
// AttributeProto { name = 1; f = 2; i = 3; type = 20 (FLOAT = 1, INT = 2) }
const intAttribute = (name: string, value: number): number[] => [...stringField(1, name), ...intField(3, value), ...intField(20, 2)];
const floatAttribute = (name: string, value: number): number[] => [...stringField(1, name), ...floatField(2, value), ...intField(20, 1)];
// NodeProto { input = 1; output = 2; name = 3; op_type = 4; attribute = 5; domain = 7 }
function node(op: string, name: string, inputs: readonly string[], outputs: readonly string[], attributes: readonly number[][]): number[] {
  return [
    ...inputs.flatMap((i) => stringField(1, i)),
    ...outputs.flatMap((o) => stringField(2, o)),
    ...stringField(3, name),
    ...stringField(4, op),
    ...attributes.flatMap((a) => bytesField(5, a)),
    ...stringField(7, 'com.microsoft'),
  ];
}
// TensorProto { dims = 1; data_type = 2; name = 8; raw_data = 9 }, int32 values.
function int32Initializer(name: string, dims: readonly number[], values: readonly number[]): number[] {
  const raw = new Uint8Array(new Int32Array(values).buffer);
  return [...dims.flatMap((n) => intField(1, n)), ...intField(2, ELEM.i32), ...stringField(8, name), ...bytesField(9, raw)];
}

/** The model: `nodes` attention nodes chained through the query, inputs query, key, value, output `out`. */
export function attentionModel(p: OnnxAttention, nodes: number): Uint8Array {
  const why = onnxUnsupported(p);
  if (why !== undefined) throw new Error(why);
  const elem = ELEM[p.dtype];
  const scale = 1 / Math.sqrt(p.d);
  const graph: number[] = [];
  const initializers: number[][] = [];
  for (let n = 0; n < nodes; n++) {
    const query = n === 0 ? 'query' : `hidden${n}`;
    const output = n === nodes - 1 ? 'out' : `hidden${n + 1}`;
    if (p.causal) {
      // Prefill with no past: seqlens_k = L − 1 for each batch, total_sequence_length = L.
      graph.push(
        ...bytesField(
          1,
          node('GroupQueryAttention', `attention${n}`, [query, 'key', 'value', '', '', 'seqlens_k', 'total_sequence_length'], [output, `present_key${n}`, `present_value${n}`], [
            intAttribute('num_heads', p.Hq),
            intAttribute('kv_num_heads', p.Hkv),
            floatAttribute('scale', scale),
          ]),
        ),
      );
    } else {
      graph.push(...bytesField(1, node('MultiHeadAttention', `attention${n}`, [query, 'key', 'value'], [output], [intAttribute('num_heads', p.Hq), floatAttribute('scale', scale)])));
    }
  }
  if (p.causal) {
    initializers.push(int32Initializer('seqlens_k', [p.B], Array.from({ length: p.B }, () => p.L - 1)));
    initializers.push(int32Initializer('total_sequence_length', [], [p.L]));
  }
  graph.push(...initializers.flatMap((t) => bytesField(5, t)));
  graph.push(...stringField(2, 'attention'));
  graph.push(...bytesField(11, valueInfo('query', elem, [p.B, p.L, p.Hq * p.d])));
  graph.push(...bytesField(11, valueInfo('key', elem, [p.B, p.L, p.Hkv * p.d])));
  graph.push(...bytesField(11, valueInfo('value', elem, [p.B, p.L, p.Hkv * p.d])));
  graph.push(...bytesField(12, valueInfo('out', elem, [p.B, p.L, p.Hq * p.d])));
  // ModelProto { ir_version = 1; producer_name = 2; graph = 7; opset_import = 8 { domain = 1; version = 2 } }
  const model = [
    ...intField(1, 8),
    ...stringField(2, 'hw4-cli bench'),
    ...bytesField(7, graph),
    ...bytesField(8, [...stringField(1, ''), ...intField(2, 17)]),
    ...bytesField(8, [...stringField(1, 'com.microsoft'), ...intField(2, 1)]),
  ];
  return Uint8Array.from(model);
}
