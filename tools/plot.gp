# tools/plot.gp - busbw vs size, hcomm vs MPI, one panel per collective.
# Called by tools/bench.sh:
#   gnuplot -e "datadir='DIR'; np='2'; settings='default tuned'; \
#               colls='allreduce broadcast ...'; outfile='DIR/busbw-np2.png'" plot.gp
# reads DIR/bench-npNP-COLL.dat: size, then per setting
#   hcomm_us hcomm_busbw mpi_us mpi_busbw

set terminal pngcairo size 1500,900 font ",9" noenhanced
set output outfile
set datafile missing NaN
set logscale x 2
set format x "%.0b%B"
set xlabel "size (B)"
set ylabel "busbw (GB/s)"
set grid
set key top left
ns = words(settings)
nc = words(colls)
rows = (nc + 2) / 3
set multiplot layout rows, 3 title sprintf("hcomm vs MPI, %s ranks (busbw; solid: hcomm, dashed: MPI)", np)
do for [c = 1:nc] {
    f = sprintf("%s/bench-np%s-%s.dat", datadir, np, word(colls, c))
    set title word(colls, c)
    plot for [i = 1:ns] f using 1:(column(3 + 4 * (i - 1))) with linespoints lw 2 pt 7 ps 0.5 lc i \
             title "hcomm (" . word(settings, i) . ")", \
         for [i = 1:ns] f using 1:(column(5 + 4 * (i - 1))) with linespoints lw 1 dt 2 pt 6 ps 0.5 lc i \
             title "MPI (" . word(settings, i) . ")"
}
unset multiplot
