; One TLOAD with two output tiles (the arrow may be written once or before each output),
; then an element-wise add of the two halves.
;   tilecosim run examples/two_outputs.s --reg a0=0
TLOAD.ND2NZ <LB0:32, LB1:16, LB2:32, FP16, Zero>, [a0], ->T<512>, ->U<512>
TADD T#1, U#1, ->M
