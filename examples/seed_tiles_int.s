; The tile-register example of the source document on tile registers, in an integer type
; (S16) so that it also runs on the RTL tile system, whose TADD/TSUB are integer only.
; Run it from the repository's root, on the machine and on the RTL:
;   tilecosim run examples/seed_tiles_int.s --reg a0=0 --reg a1=512 --reg a2=1024
;   tilecosim run examples/seed_tiles_int.s --reg a0=0 --reg a1=512 --reg a2=1024 --backend icarus
; a0, a1 and a2 are the global-memory addresses of the three 16x16 S16 sources.
TLOAD.NORM <LB0:16, LB1:16, S16>, [a0], ->T<512>   ; T#1, later T#3
TLOAD.NORM <LB0:16, LB1:16, S16>, [a1], ->T<512>   ; later T#2
TLOAD.NORM <LB0:16, LB1:16, S16>, [a2], ->T<512>   ; T#1
TADD T#2.reuse, T#3, ->U     ; keeps T#2, releases T#3
TSUB T#2, T#1, ->U           ; T#2 may be read again
