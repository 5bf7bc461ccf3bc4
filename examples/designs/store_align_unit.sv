// store_align_unit: a StoreAlign unit (two vector registers of VL = 256 bytes -> UB, under a
// byte mask) written directly in SystemVerilog from seed 003 (the StoreDist table, the
// MaskReg, PostUpdate and AddrReg addressing) and docs/design.md D11/D12, on tilecosim's
// store-align port contract (docs/contract.md).  It started as
//     tilecosim contract store-align --lang systemverilog
// and is an example of a design from elsewhere: it shares no code with tilecosim's own
// StoreAlign unit, and times itself its own way.
//
// Timing: one op at a time.  The cycle an op is taken, its checks are made and the bytes to
// write are registered; the next cycle UB is written (nothing, for a faulting op); from the
// cycle after that, the result is offered until taken.  The result leaves 2 cycles after the
// op, one op every 3 cycles (the built-in unit takes one op a cycle, its result 1 cycle on).
//
// Run it:
//     tilecosim regress --ops store-align --dut examples/designs/store_align_unit.sv \
//         --backend verilator --count 1000
//
// verilator lint_off DECLFILENAME
package store_align_unit_pkg;
    // StoreDist (D12): the codes of the dist field
    localparam logic [4:0] DIST_NORM_B8 = 5'd0, DIST_NORM_B16 = 5'd1, DIST_NORM_B32 = 5'd2,
        DIST_FIRST_ELEMENT_B8 = 5'd3, DIST_FIRST_ELEMENT_B16 = 5'd4,
        DIST_FIRST_ELEMENT_B32 = 5'd5, DIST_PACK_B16 = 5'd6, DIST_PACK_B32 = 5'd7,
        DIST_INTLV_B8 = 5'd8, DIST_INTLV_B16 = 5'd9, DIST_PACK_B64 = 5'd10,
        DIST_INTLV_B32 = 5'd11, DIST_PACK4_B32 = 5'd12, DIST_NORM = 5'd16;
    localparam logic [1:0] POST_UPDATE = 2'd1, ADDR_REG = 2'd2;   // 0: the address as given
    localparam logic [2:0] NO_FAULT = 3'd0, ILLEGAL_PARAMETER = 3'd2, ALIGNMENT = 3'd5,
        OUT_OF_BOUNDS = 3'd6;
    // how a mode lays the registers out in UB
    typedef enum logic [2:0] {NORM, FIRST, PACK, PACK4, INTLV, TRAIT2} shape_t;
    // op__payload: 4427 bits; the first member is the most significant
    typedef struct packed {
        logic [255:0] mask;         // one bit per byte lane of the register
        logic [2047:0] src1;        // the second register (INTLV, RegTraitNumTwo)
        logic [2047:0] src0;
        logic [1:0] reg_trait;      // 2: RegTraitNumTwo
        logic signed [31:0] value;  // PostUpdate stride / AddrReg offset, in elements
        logic [1:0] mode;           // PLAIN, POST_UPDATE, ADDR_REG
        logic [31:0] addr;          // UB byte address
        logic [1:0] t;              // log2 of the element's bytes
        logic [4:0] dist_;          // StoreDist
    } op_t;
    // res__payload: 45 bits
    typedef struct packed {
        logic [2:0] fault;
        logic signed [41:0] next_addr;
    } res_t;
endpackage

module store_align_unit import store_align_unit_pkg::*; (
    input  logic clk,
    input  logic rst,
    input  logic [31:0] ub_size,
    input  op_t op__payload,
    input  logic op__valid,
    output logic op__ready,
    output logic [31:0] ub_waddr,
    output logic ub_wen,
    output logic [4095:0] ub_wdata,
    output logic [511:0] ub_wbe,
    output res_t res__payload,
    output logic res__valid,
    input  logic res__ready
);
    localparam int VL = 256;

    // --- the op's checks: the mode's shape, bytes and alignment, legality, address, bounds ---
    op_t op;
    assign op = op__payload;

    logic known;
    shape_t shape;
    logic [3:0] w;                 // bytes of the mode's element
    logic [10:0] nbytes;           // bytes written
    logic [5:0] align;             // their alignment in bytes
    always @* begin
        known = 1'b1;
        w = 4'd1 << op.t;
        shape = NORM;
        case (op.dist_)                                 // seed 003, the StoreDist table
            DIST_NORM:              ;
            DIST_NORM_B8:           w = 1;
            DIST_NORM_B16:          w = 2;
            DIST_NORM_B32:          w = 4;
            DIST_FIRST_ELEMENT_B8:  begin shape = FIRST; w = 1; end
            DIST_FIRST_ELEMENT_B16: begin shape = FIRST; w = 2; end
            DIST_FIRST_ELEMENT_B32: begin shape = FIRST; w = 4; end
            DIST_PACK_B16:          begin shape = PACK;  w = 2; end
            DIST_PACK_B32:          begin shape = PACK;  w = 4; end
            DIST_PACK_B64:          begin shape = PACK;  w = 8; end
            DIST_PACK4_B32:         begin shape = PACK4; w = 4; end
            DIST_INTLV_B8:          begin shape = INTLV; w = 1; end
            DIST_INTLV_B16:         begin shape = INTLV; w = 2; end
            DIST_INTLV_B32:         begin shape = INTLV; w = 4; end
            default:                known = 1'b0;
        endcase
        if (op.reg_trait == 2'd2) begin                 // RegTraitNumTwo: NORM of 2 VL bytes
            shape = TRAIT2;
            w = 4'd1 << op.t;
        end
        case (shape)
            FIRST:   begin nbytes = 11'(w); align = 6'(w); end
            PACK:    begin nbytes = VL / 2; align = 32; end
            PACK4:   begin nbytes = VL / 4; align = 32; end
            INTLV,
            TRAIT2:  begin nbytes = 2 * VL; align = 32; end
            default: begin nbytes = VL;     align = 32; end
        endcase
    end

    wire is_norm = op.dist_ == DIST_NORM;
    wire is_reg = op.mode == ADDR_REG;
    wire is_post = op.mode == POST_UPDATE;
    wire illegal = op.reg_trait == 2'd0 || op.reg_trait == 2'd3
        || (op.reg_trait == 2'd1 && (!known
                                     || (op.t == 2'd3 && !is_norm && op.dist_ != DIST_PACK_B64)))
        || (op.reg_trait == 2'd2 && (!is_norm || op.t < 2'd2 || is_reg));

    // the value in bytes (sign-extended by hand: Icarus 11 zero-extends a size cast of a
    // signed value)
    wire signed [42:0] scaled = {{11{op.value[31]}}, op.value} <<< op.t;
    wire signed [42:0] base = {11'd0, op.addr};
    wire signed [42:0] ea = is_reg ? base + scaled : base;   // where UB is written
    wire signed [41:0] next_addr = 42'(is_post ? base + scaled : base);
    wire [42:0] amask = {37'd0, align - 6'd1};
    wire misaligned = (((is_reg || is_post) && (scaled & amask) != 0)
                       || (base & amask) != 0 || (ea & amask) != 0);
    wire outside = ea < 0 || ea + 43'(nbytes) > 43'(ub_size);
    wire [2:0] fault = illegal ? ILLEGAL_PARAMETER : misaligned ? ALIGNMENT
                     : outside ? OUT_OF_BOUNDS : NO_FAULT;

    // --- the bytes to write: for each UB byte b from the address on, its source and enable ---
    // (plain vectors: Icarus 11 takes no variable index into a member of a packed struct)
    wire [2047:0] src0 = op.src0, src1 = op.src1;
    wire [255:0] mask = op.mask;
    logic [7:0] r0 [0:VL - 1];
    logic [7:0] r1 [0:VL - 1];
    always @* for (int i = 0; i < VL; i++) begin
        r0[i] = src0[8 * i +: 8];
        r1[i] = src1[8 * i +: 8];
    end

    logic [4095:0] data;
    logic [511:0] be;
    int wi, e, k;
    always @* begin
        data = '0;
        be = '0;
        wi = int'(w);
        for (int b = 0; b < 2 * VL; b++) begin
            if (b < int'(nbytes)) begin
                case (shape)
                    NORM: begin                          // element e enabled by its first lane
                        data[8 * b +: 8] = r0[b];
                        be[b] = mask[(b / wi) * wi];
                    end
                    FIRST: begin                         // the first element, always
                        data[8 * b +: 8] = r0[b];
                        be[b] = 1'b1;
                    end
                    PACK: begin                          // the low half of each element
                        e = b / (wi / 2);
                        k = b % (wi / 2);
                        data[8 * b +: 8] = r0[e * wi + k];
                        be[b] = mask[e * wi];
                    end
                    PACK4: begin                         // the low byte of each b32
                        data[8 * b +: 8] = r0[4 * b];
                        be[b] = mask[4 * b];
                    end
                    INTLV: begin                         // elements of src0 and src1 in turn
                        e = b / wi;
                        k = b % wi;
                        data[8 * b +: 8] = e % 2 == 0 ? r0[(e / 2) * wi + k] : r1[(e / 2) * wi + k];
                        be[b] = 1'b1;
                    end
                    default: begin                       // TRAIT2: low halves from src0, high
                        e = b / wi;                      // halves from src1
                        k = b % wi;
                        data[8 * b +: 8] = k < wi / 2 ? r0[e * (wi / 2) + k]
                                                      : r1[e * (wi / 2) + k - wi / 2];
                        be[b] = mask[e * (wi / 2)];
                    end
                endcase
            end
        end
    end

    // --- one op at a time: take it, write UB, offer the result --------------------------------
    typedef enum logic [1:0] {IDLE, WRITE, OFFER} state_t;
    state_t state;
    assign op__ready = state == IDLE;
    wire take = op__valid && op__ready;
    assign res__valid = state == OFFER;

    always @(posedge clk) begin
        if (rst) begin
            state <= IDLE;
            ub_wen <= 1'b0;
        end else begin
            ub_wen <= 1'b0;
            case (state)
                IDLE: if (take) begin
                    res__payload.fault <= fault;
                    res__payload.next_addr <= next_addr;
                    ub_waddr <= ea[31:0];
                    ub_wdata <= data;
                    ub_wbe <= be;
                    ub_wen <= fault == NO_FAULT;        // a faulting op writes nothing
                    state <= WRITE;
                end
                WRITE: state <= OFFER;
                default: if (res__ready) state <= IDLE;
            endcase
        end
    end
endmodule
