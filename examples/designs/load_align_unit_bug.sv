// load_align_unit_bug: load_align_unit.sv with a one-line bug behind the parameter BUG (on by
// default): DIST_BRC_B16 broadcasts the element's first byte to both of its bytes.  regress
// finds it:
//     tilecosim regress --ops load-align --dut examples/designs/load_align_unit_bug.sv \
//         --backend verilator --count 200
//
// The rest is load_align_unit.sv, a LoadAlign unit (UB -> two vector registers of VL = 256
// bytes) written directly in SystemVerilog from seed 003 (the LoadDist tables of single and dual loads,
// PostUpdate and AddrReg addressing) and docs/design.md D11/D12, on tilecosim's load-align
// port contract (docs/contract.md).  It started as
//     tilecosim contract load-align --lang systemverilog
// and is an example of a design from elsewhere: it shares no code with tilecosim's own
// LoadAlign unit, and times itself its own way.
//
// Timing: one op at a time.  The cycle an op is taken, its checks are made and UB is read at
// its effective address; the next cycle the 512 bytes arrive and are distributed into the
// result registers; the cycle after that, the result is offered until taken.  Latency 2 cycles
// from op to result, one op every 3 cycles (the built-in unit takes one op a cycle).
//
// verilator lint_off DECLFILENAME
package load_align_unit_bug_pkg;
    // LoadDist (D12): the codes of the dist field
    localparam logic [4:0] DIST_NORM = 5'd0, DIST_BRC_B8 = 5'd1, DIST_BRC_B16 = 5'd2,
        DIST_BRC_B32 = 5'd3, DIST_US_B8 = 5'd6, DIST_US_B16 = 5'd7, DIST_DS_B8 = 5'd8,
        DIST_DS_B16 = 5'd9, DIST_DINTLV_B8 = 5'd11, DIST_DINTLV_B16 = 5'd12,
        DIST_UNPACK_B8 = 5'd13, DIST_UNPACK_B16 = 5'd14, DIST_BLK = 5'd15,
        DIST_E2B_B16 = 5'd16, DIST_E2B_B32 = 5'd17, DIST_UNPACK_B32 = 5'd18,
        DIST_DINTLV_B32 = 5'd19, DIST_UNPACK4_B8 = 5'd20;
    localparam logic [1:0] POST_UPDATE = 2'd1, ADDR_REG = 2'd2;   // 0: the address as given
    localparam logic [2:0] NO_FAULT = 3'd0, ILLEGAL_PARAMETER = 3'd2, ALIGNMENT = 3'd5,
        OUT_OF_BOUNDS = 3'd6;
    // op__payload: 75 bits; the first member is the most significant
    typedef struct packed {
        logic [1:0] reg_trait;      // 2: RegTraitNumTwo
        logic signed [31:0] value;  // PostUpdate stride / AddrReg offset, in elements
        logic [1:0] mode;           // PLAIN, POST_UPDATE, ADDR_REG
        logic [31:0] addr;          // UB byte address
        logic [1:0] t;              // log2 of the element's bytes
        logic [4:0] dist_;          // LoadDist
    } op_t;
    // res__payload: 4141 bits
    typedef struct packed {
        logic [2:0] fault;
        logic signed [41:0] next_addr;
        logic [2047:0] dst1;
        logic [2047:0] dst0;
    } res_t;
endpackage

module load_align_unit_bug import load_align_unit_bug_pkg::*; #(
    parameter bit BUG = 1'b1
) (
    input  logic clk,
    input  logic rst,
    input  logic [31:0] ub_size,
    input  op_t op__payload,
    input  logic op__valid,
    output logic op__ready,
    output logic [31:0] ub_addr,
    output logic ub_en,
    input  logic [4095:0] ub_data,
    output res_t res__payload,
    output logic res__valid,
    input  logic res__ready
);
    localparam logic [10:0] VL = 11'd256;

    // --- the op's checks: the mode's bytes and alignment, legality, address, bounds ---------
    op_t op;
    assign op = op__payload;

    logic known;
    logic [10:0] nbytes;           // bytes read
    logic [5:0] align;             // their alignment in bytes
    always @* begin
        known = 1'b1;
        nbytes = 11'd256;
        align = 6'd32;
        case (op.dist_)                                 // seed 003, tables 3 and 6
            DIST_NORM:                            begin nbytes = VL;     align = 32; end
            DIST_BRC_B8:                          begin nbytes = 1;      align = 1;  end
            DIST_BRC_B16:                         begin nbytes = 2;      align = 2;  end
            DIST_BRC_B32:                         begin nbytes = 4;      align = 4;  end
            DIST_US_B8, DIST_US_B16,
            DIST_UNPACK_B8, DIST_UNPACK_B16,
            DIST_UNPACK_B32:                      begin nbytes = VL / 2; align = 32; end
            DIST_UNPACK4_B8:                      begin nbytes = VL / 4; align = 32; end
            DIST_DS_B8, DIST_DS_B16, DIST_DINTLV_B8,
            DIST_DINTLV_B16, DIST_DINTLV_B32:     begin nbytes = 2 * VL; align = 32; end
            DIST_BLK:                             begin nbytes = 32;     align = 32; end
            DIST_E2B_B16:                         begin nbytes = VL / 16; align = 16; end
            DIST_E2B_B32:                         begin nbytes = VL / 8; align = 32; end
            default:                              known = 1'b0;
        endcase
        if (op.reg_trait == 2'd2)                       // RegTraitNumTwo: two registers' worth
            nbytes = 2 * VL;
    end

    wire is_norm = op.dist_ == DIST_NORM;
    wire is_reg = op.mode == ADDR_REG;
    wire is_post = op.mode == POST_UPDATE;
    wire illegal = !known
        || (op.t == 2'd3 && !is_norm)                   // b64: NORM only
        || op.reg_trait == 2'd0 || op.reg_trait == 2'd3
        || (op.reg_trait == 2'd2 && (!is_norm || op.t < 2'd2 || is_reg));

    // the value in bytes (sign-extended by hand: Icarus 11 zero-extends a size cast of a
    // signed value)
    wire signed [42:0] scaled = {{11{op.value[31]}}, op.value} <<< op.t;
    wire signed [42:0] base = {11'd0, op.addr};
    wire signed [42:0] ea = is_reg ? base + scaled : base;   // where UB is read
    wire signed [41:0] next_addr = 42'(is_post ? base + scaled : base);
    wire [42:0] amask = {37'd0, align - 6'd1};
    wire misaligned = (((is_reg || is_post) && (scaled & amask) != 0)
                       || (base & amask) != 0 || (ea & amask) != 0);
    wire outside = ea < 0 || ea + 43'(nbytes) > 43'(ub_size);
    wire [2:0] fault = illegal ? ILLEGAL_PARAMETER : misaligned ? ALIGNMENT
                     : outside ? OUT_OF_BOUNDS : NO_FAULT;

    // --- one op at a time: take it and read UB, distribute, offer the result ------------------
    typedef enum logic [1:0] {IDLE, READ, OFFER} state_t;
    state_t state;
    assign op__ready = state == IDLE;
    wire take = op__valid && op__ready;
    assign ub_en = take && fault == NO_FAULT;           // a faulting op reads nothing
    assign ub_addr = ea[31:0];
    assign res__valid = state == OFFER;

    logic [4:0] r_dist;
    logic [1:0] r_t, r_trait;
    logic [2047:0] d0, d1;
    always @(posedge clk) begin
        if (rst) begin
            state <= IDLE;
        end else begin
            case (state)
                IDLE: if (take) begin
                    r_dist <= op.dist_;
                    r_t <= op.t;
                    r_trait <= op.reg_trait;
                    res__payload.fault <= fault;
                    res__payload.next_addr <= next_addr;
                    res__payload.dst0 <= '0;
                    res__payload.dst1 <= '0;
                    state <= fault == NO_FAULT ? READ : OFFER;
                end
                READ: begin
                    res__payload.dst0 <= d0;
                    res__payload.dst1 <= d1;
                    state <= OFFER;
                end
                default: if (res__ready) state <= IDLE;
            endcase
        end
    end

    // --- the distribution: for each destination byte b, the source byte it takes -------------
    logic [7:0] win [0:2 * VL - 1];                     // the bytes read, from the address on
    always @* for (int i = 0; i < 2 * VL; i++) win[i] = ub_data[8 * i +: 8];

    int half;                                           // RegTraitNumTwo: bytes of a half
    always @* begin
        d0 = '0;
        d1 = '0;
        half = r_t == 2'd3 ? 4 : 2;
        for (int b = 0; b < VL; b++) begin
            if (r_trait == 2'd2) begin                  // halves of each element to dst0, dst1
                d0[8 * b +: 8] = win[(b / half) * 2 * half + b % half];
                d1[8 * b +: 8] = win[(b / half) * 2 * half + half + b % half];
            end else begin
                case (r_dist)
                    DIST_NORM:       d0[8 * b +: 8] = win[b];
                    DIST_BRC_B8:     d0[8 * b +: 8] = win[0];
                    DIST_BRC_B16:    d0[8 * b +: 8] = BUG ? win[0] : win[b % 2];
                    DIST_BRC_B32:    d0[8 * b +: 8] = win[b % 4];
                    DIST_US_B8:      d0[8 * b +: 8] = win[b / 2];
                    DIST_US_B16:     d0[8 * b +: 8] = win[(b / 4) * 2 + b % 2];
                    DIST_DS_B8:      d0[8 * b +: 8] = win[2 * b];
                    DIST_DS_B16:     d0[8 * b +: 8] = win[(b / 2) * 4 + b % 2];
                    DIST_UNPACK_B8:  d0[8 * b +: 8] = b % 2 == 0 ? win[b / 2] : 8'd0;
                    DIST_UNPACK_B16: d0[8 * b +: 8] = b % 4 < 2 ? win[(b / 4) * 2 + b % 4] : 8'd0;
                    DIST_UNPACK_B32: d0[8 * b +: 8] = b % 8 < 4 ? win[(b / 8) * 4 + b % 8] : 8'd0;
                    DIST_UNPACK4_B8: d0[8 * b +: 8] = b % 4 == 0 ? win[b / 4] : 8'd0;
                    DIST_BLK:        d0[8 * b +: 8] = win[b % 32];
                    DIST_E2B_B16:    d0[8 * b +: 8] = win[(b / 32) * 2 + b % 2];
                    DIST_E2B_B32:    d0[8 * b +: 8] = win[(b / 32) * 4 + b % 4];
                    DIST_DINTLV_B8: begin
                        d0[8 * b +: 8] = win[2 * b];
                        d1[8 * b +: 8] = win[2 * b + 1];
                    end
                    DIST_DINTLV_B16: begin
                        d0[8 * b +: 8] = win[(b / 2) * 4 + b % 2];
                        d1[8 * b +: 8] = win[(b / 2) * 4 + 2 + b % 2];
                    end
                    DIST_DINTLV_B32: begin
                        d0[8 * b +: 8] = win[(b / 4) * 8 + b % 4];
                        d1[8 * b +: 8] = win[(b / 4) * 8 + 4 + b % 4];
                    end
                    default: ;
                endcase
            end
        end
    end
endmodule
