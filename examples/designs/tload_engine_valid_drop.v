// tload_engine_valid_drop: tload_engine_bytewise.v with a protocol bug and nothing else
// changed: while a tile write is stalled (write__valid high, write__ready low), it drops
// write__valid in every other cycle and raises it again, the payload kept.  Every byte it
// writes is right, so a comparison of the data alone passes; the contract forbids it ("once
// the sender raises valid, it keeps valid high and the payload unchanged until the beat
// moves"), and regress reports it as a protocol violation, with its cycle and a waveform:
//     tilecosim regress --ops tload --dut examples/designs/tload_engine_valid_drop.v \
//         --backend verilator --count 20 --seed 1
//
// The rest, and its subset (tload_engine_valid_drop.supports.toml), are those of
// tload_engine_bytewise.v.
module tload_engine_valid_drop (
    input  wire clk,
    input  wire rst,                     // synchronous, active high
    input  wire [870:0] instr__payload,
    input  wire instr__valid,
    output wire instr__ready,
    input  wire [63:0] mem_size,
    output wire [69:0] req__payload,     // {len[69:64], addr[63:0]}
    output wire req__valid,
    input  wire req__ready,
    input  wire [255:0] resp__payload,   // byte k = memory[addr + k]
    input  wire resp__valid,
    output wire resp__ready,
    output wire [308:0] write__payload,  // {be[308:277], data[276:21], offset[20:3], tile[2:0]}
    output wire write__valid,
    input  wire write__ready,
    output wire [2:0] done__payload,     // {fault}
    output wire done__valid,
    input  wire done__ready
);
    localparam integer W = 32;
    localparam [2:0] IDLE = 3'd0, BYTE = 3'd1, REQ = 3'd2, WAIT = 3'd3, WRITE = 3'd4,
        DONE = 3'd5;
    localparam [1:0] PAD_NULL = 2'd3;

    // --- the instruction's fields (bits of instr__payload, docs/contract.md) ----------------
    wire [4:0]  f_dtype        = instr__payload[7:3];
    wire [1:0]  f_pad          = instr__payload[9:8];
    wire [63:0] f_valid_col    = instr__payload[73:10];
    wire [63:0] f_valid_row    = instr__payload[137:74];
    wire [63:0] f_col          = instr__payload[201:138];
    wire [63:0] f_base         = instr__payload[265:202];
    wire [63:0] f_stride       = instr__payload[329:266];
    wire        f_stride_given = instr__payload[330];
    wire [63:0] f_size0        = instr__payload[422:359];    // sizes[0]

    // log2 of the element's bytes, from the D9 data-type code
    reg [1:0] lg;
    always @* begin
        case (f_dtype)
            5'd0, 5'd16, 5'd24:                lg = 2'd3;    // FP64, S64, U64
            5'd1, 5'd2, 5'd3, 5'd17, 5'd25:    lg = 2'd2;    // FP32, TF32, HF32, S32, U32
            5'd4, 5'd5, 5'd18, 5'd26:          lg = 2'd1;    // FP16, BF16, S16, U16
            default:                           lg = 2'd0;    // the 1-byte types
        endcase
    end

    // --- the TLOAD being built ------------------------------------------------------------
    reg [2:0]   state;
    reg         null_pad;
    reg [63:0]  row_bytes, valid_bytes, valid_rows, stride, size;
    reg [63:0]  r, cb, row_addr;          // the next byte's row, its byte in the row, the row's
    reg [17:0]  off;                      // source address; the write's offset in the tile
    reg [5:0]   j;                        // the next byte of the write, 0..W
    reg [5:0]   n;                        // the bytes of the run being read
    reg [255:0] data;
    reg [31:0]  be;

    // the next run: from byte cb of row r, as far as the write, the valid region (or the pad
    // after it, to the row's end) and the row go
    wire        in_region = r < valid_rows && cb < valid_bytes;
    wire [63:0] left = in_region ? valid_bytes - cb : row_bytes - cb;
    wire [6:0]  room = 7'd32 - {1'b0, j};
    wire [5:0]  run = left < {57'd0, room} ? left[5:0] : room[5:0];
    wire [31:0] j32 = {26'd0, j}, n32 = {26'd0, n}, run32 = {26'd0, run};   // for the loops

    assign instr__ready = state == IDLE;
    assign req__valid = state == REQ;
    assign req__payload = {n, row_addr + cb};
    assign resp__ready = state == WAIT;
    reg         hide;                     // THE BUG: valid hidden in every other stalled cycle
    assign write__valid = state == WRITE && !hide;
    assign write__payload = {be, data, off, 3'd0};
    assign done__valid = state == DONE;
    assign done__payload = 3'd0;          // no fault checks: a declared subset

    integer k;
    always @(posedge clk) begin
        if (rst) begin
            state <= IDLE;
            hide <= 1'b0;
        end else begin
            hide <= state == WRITE && !write__ready && !hide;
            case (state)
                IDLE: if (instr__valid) begin
                    null_pad <= f_pad == PAD_NULL;
                    row_bytes <= f_col << lg;
                    valid_bytes <= f_valid_col << lg;
                    valid_rows <= f_valid_row;
                    stride <= f_stride_given ? f_stride : f_valid_col << lg;
                    size <= f_size0;
                    r <= 64'd0;
                    cb <= 64'd0;
                    row_addr <= f_base;
                    off <= 18'd0;
                    j <= 6'd0;
                    state <= BYTE;
                end
                BYTE: if (in_region) begin     // a run to read
                    n <= run;
                    state <= REQ;
                end else begin                // a run of pad bytes: zero, or not written (Null)
                    for (k = 0; k < W; k = k + 1)
                        if (k >= j32 && k < j32 + run32) begin
                            data[8 * k +: 8] <= 8'd0;
                            be[k] <= !null_pad;
                        end
                    advance(run);
                end
                REQ: if (req__ready) state <= WAIT;
                WAIT: if (resp__valid) begin
                    for (k = 0; k < W; k = k + 1)
                        if (k >= j32 && k < j32 + n32) begin
                            data[8 * k +: 8] <= resp__payload[8 * (k - j32) +: 8];
                            be[k] <= 1'b1;
                        end
                    advance(n);
                end
                WRITE: if (write__valid && write__ready) begin
                    if ({46'd0, off} + 64'd32 == size) begin
                        state <= DONE;
                    end else begin
                        off <= off + 18'd32;
                        j <= 6'd0;
                        state <= BYTE;
                    end
                end
                default: if (done__ready) state <= IDLE;        // DONE
            endcase
        end
    end

    // past a run of ``len`` bytes: along the row, or to the next row; a write every W bytes
    task advance(input [5:0] len);
        begin
            if (cb + {58'd0, len} == row_bytes) begin
                cb <= 64'd0;
                r <= r + 64'd1;
                row_addr <= row_addr + stride;
            end else begin
                cb <= cb + {58'd0, len};
            end
            j <= j + len;
            state <= j + len == 6'd32 ? WRITE : BYTE;
        end
    endtask

    // verilator lint_off UNUSEDSIGNAL
    wire unused = &{instr__payload[2:0], instr__payload[358:331], instr__payload[870:423],
                    mem_size, resp__payload[255:8], 1'b0};
    // verilator lint_on UNUSEDSIGNAL
endmodule
