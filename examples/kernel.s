; A whole kernel: load A and B, add them, store the sum, and load the stored sum back.
;   C = A + B, A and B 32 x 32 S16 matrices (row-major, dense) at a0 and a1, C to a2.
; The sum goes through the tile register as NZ fractals (ND2NZ) and back to row-major
; memory (TSTORE.ND2NZ, the inverse), and the last TLOAD reads the bytes TSTORE wrote.
; Run it from the repository's root, and save the final memory and registers:
;   tilecosim run examples/kernel.s --reg a0=0 --reg a1=2048 --reg a2=8192 --out kernel.npz
TLOAD.ND2NZ <LB0:32, LB1:32, S16>, [a0], ->T<2KB>   ; A
TLOAD.ND2NZ <LB0:32, LB1:32, S16>, [a1], ->T<2KB>   ; B
TADD T#1, T#2, ->U                                  ; A + B (releases A and B)
TSTORE.ND2NZ <LB0:32, LB1:32, S16>, U#1, [a2]       ; C (releases the sum)
TLOAD.NORM <LB0:32, LB1:32, S16>, [a2], ->T<2KB>    ; C read back, row-major
