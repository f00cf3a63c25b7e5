#!/bin/sh
# markdown: size | variant1 min-max | variant2 ... (hc times us) | ratio ranges
f=$1
sort -k3,3n "$f" | awk '
{ k=$3; v=$1; t=$5+0; r=$9+0;
  if(!(v in vs)){vs[v]=1; vo[++nv]=v}
  if(!(k in ks)){ks[k]=1; ko[++nk]=k}
  kk=k SUBSEP v
  if(!(kk in mn) || t<mn[kk]) mn[kk]=t; if(!(kk in mx) || t>mx[kk]) mx[kk]=t;
  if(!(kk in rmn) || r<rmn[kk]) rmn[kk]=r; if(!(kk in rmx) || r>rmx[kk]) rmx[kk]=r; }
function fm(x){ if(x>=100) return sprintf("%.0f",x); return sprintf("%.3g",x)}
function hs(b){ if(b>=1048576) return (b/1048576) " MiB"; if(b>=1024) return (b/1024) " KiB"; return b " B"}
END{ printf "| size |"; for(i=1;i<=nv;i++) printf " %s (us) |", vo[i]; for(i=1;i<=nv;i++) printf " %s ratio |", vo[i]; printf "\n|---|"; for(i=1;i<=2*nv;i++) printf "---:|"; printf "\n";
 for(j=1;j<=nk;j++){k=ko[j]; printf "| %s |", hs(k); for(i=1;i<=nv;i++){kk=k SUBSEP vo[i]; printf " %s-%s |", fm(mn[kk]), fm(mx[kk])}; for(i=1;i<=nv;i++){kk=k SUBSEP vo[i]; printf " %.2f-%.2f |", rmn[kk], rmx[kk]}; printf "\n"}}'
