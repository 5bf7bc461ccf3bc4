; The ring rule of the tile register file (docs/model.md, D7): every live register stays
; among the 16 names of its queue.  Sixteen TLOADs fill T; the TADD releases the two
; newest (T#1, T#2) but T#16, the first TLOAD, is still live.  The next TLOAD would make
; it T#17, which no instruction can name, so it faults TileAllocation (exit 3), though
; two of T's 16 slots are free.  Releasing T#16 first (TSUB T#16, T#16.reuse, ->U) would
; let it go in.
; run: tilecosim run examples/ring.s --reg a0=0   (add --backend verilator for the RTL)
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
TADD T#1, T#2, ->U
TLOAD.NORM <LB0:128, LB1:2, U8, Zero>, [a0], ->T<256>
