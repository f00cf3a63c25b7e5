# tools/hcomm-sim-growth.gp - time of each algorithm against ranks, one
# panel per size (tools/hcomm-sim-growth.sh writes the data and calls it):
#   gnuplot -e "datadir='D'; coll='allreduce'; sizes='4K 1M 256M'; \
#               algos='RING RD ...'; outfile='D/growth-allreduce.png'" hcomm-sim-growth.gp
# reads D/growth-COLL-SIZE.dat: ranks, each algorithm's time (us), the table's time
set terminal pngcairo size 1500,500 font ",9" noenhanced
set output outfile
set datafile missing "NaN"
set logscale xy 2
set xlabel "ranks (8 per node, 16 nodes per rack)"
set ylabel "time (us)"
set format y "%.0f"
set grid
set key top left
ns = words(sizes)
na = words(algos)
set multiplot layout 1, ns title sprintf("%s on the fattree preset (hcomm-sim); black circles: the table's choice", coll)
do for [k = 1:ns] {
    f = sprintf("%s/growth-%s-%s.dat", datadir, coll, word(sizes, k))
    set title word(sizes, k) . "B"
    plot for [i = 1:na] f using 1:(column(1 + i)) with linespoints lw 2 pt 7 ps 0.4 lc i title word(algos, i), \
         f using 1:(column(2 + na)) with points pt 6 ps 1.5 lc rgb "black" title "table"
}
unset multiplot
